# frozen_string_literal: true

# The extension built with RPERF_EXT_STALL_EVENTS=1: its hooks stall now and
# then between their clock read and their slot write, as a hook preempted
# there does on a busy machine. A clearing cut that falls in the stall reads
# the old state in its views; the event must then count after the cut, in
# the next report alone, with its wait edges. Each cut also stalls between
# its own clock read and its views, so events after its end show in them:
# the thread's lifetime must then end at that event, and the next report
# must start it there. Each report's edges must sum
# to each thread's wait, and its states to each thread's lifetime, however
# the stalls and the cuts interleave. Run by bin/test with that build first
# on the load path.
require "tmpdir"
require "json"
require_relative "../ruby/contention_helper"

class TestStalledEvents < Test::Unit::TestCase
  include ContentionHelper

  def test_clearing_cuts_count_a_stalled_event_once
    Dir.mktmpdir do |dir|
      out = File.join(dir, "rows.json")
      # Sleeping threads of the main Ractor: READY runs without the GVL,
      # beside the cut; the Ractors' hooks run in parallel with it.
      series = ractor_clearing_series(out, sleepers: 2)
      run_ruby_child(dir, "#{RACTOR_CHILD_PRELUDE}abort 'not the stalling build' unless Rperf::STALLED_EVENTS\n#{series}")
      rows = JSON.parse(File.read(out))
      assert_operator rows.size, :>, 100
      waiting = rows.count { |_, wait, *| wait > 1_000_000 }
      assert_operator waiting, :>, 20, "threads waited in many reports"
      edges_off = rows.reject { |_, wait, sum, *| (sum - wait).abs <= wait * 0.02 + 100_000 }
      assert_empty edges_off.first(5),
                   "#{edges_off.size} of #{rows.size} rows [seq, gvl_wait, edge sum, ...] off the edge law"
      states_off = rows.reject { |*, acc, life| (acc - life).abs <= life * 0.02 + 200_000 }
      assert_empty states_off.first(5),
                   "#{states_off.size} of #{rows.size} rows [..., states, lifetime] off the lifetime law"
    end
  end
end

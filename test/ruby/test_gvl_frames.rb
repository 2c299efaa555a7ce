# The sampler's synthetic [GVL blocked] / [GVL wait] frames (wall mode) carry
# the exact off-GVL time measured by the hooks: summed over all samples they
# equal the threads' blocked_ns / gvl_wait_ns, with or without a timeline.
require_relative "contention_helper"

class TestGvlFrames < Test::Unit::TestCase
  include ContentionHelper

  def synthetic_totals(h)
    frames = h["frames"]
    stacks = h["stacks"]
    totals = Hash.new(0)
    h["samples"].each do |stack_id, weight, _thread, _label|
      next if stacks[stack_id].empty? # sampled before the thread's first Ruby frame
      leaf = frames[stacks[stack_id][0]][1]
      totals[leaf] += weight if leaf.start_with?("[GVL")
    end
    totals
  end

  def check(timeline)
    report = Rperf.contention(frequency: 1000, timeline: timeline) do
      sleepers = 2.times.map { Thread.new { 20.times { sleep 0.005 } } }
      workers = cpu_threads(2, 0.05)
      (sleepers + workers).each(&:join)
    end
    h = report.to_h
    got = synthetic_totals(h)
    # Off-GVL time becomes weight when the thread resumes: a thread blocked
    # through the whole profile (a helper thread an earlier test left, such
    # as Timeout's) has blocked_ns and, by design, no weight yet.
    resumed = h["threads"].reject { |t| !t["exited"] && t["running_ns"].zero? && t["gvl_wait_ns"].zero? }
    blocked = resumed.sum { |t| t["blocked_ns"] }
    wait = resumed.sum { |t| t["gvl_wait_ns"] }
    assert_operator blocked, :>, 150_000_000, "two sleepers block ~100 ms each"
    assert_in_delta blocked, got["[GVL blocked]"], blocked * 0.02 + 2_000_000, "timeline: #{timeline}"
    assert_in_delta wait, got["[GVL wait]"], wait * 0.02 + 2_000_000, "timeline: #{timeline}"
  end

  def test_gvl_frames_match_exact_totals_with_timeline
    check(true)
  end

  def test_gvl_frames_match_exact_totals_without_timeline
    check(false)
  end
end

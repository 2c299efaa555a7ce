# frozen_string_literal: true

# The extension built without its sampler and/or its analysis module
# (RPERF_EXT_WITHOUT, see ext/rperf/extconf.rb), so that every #ifdef branch
# is compiled and loaded in CI: the contention core must account exactly on
# its own, and the parts that are left out must say so instead of failing
# obscurely. Run by bin/test once per variant with that build first on the
# load path.
require "tmpdir"
require_relative "../ruby/contention_helper"

class TestVariant < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  def report
    @report ||= Rperf.contention do
      # 0.25 s of work each, beyond the 100 ms time slice: they take turns.
      cpu_threads(3, 0.25, prefix: "w").each(&:join)
    end
  end

  def test_threads_conserve_their_lifetime_and_wait_on_each_other
    workers = report.threads.select { |t| t.name&.start_with?("w") }
    assert_equal 3, workers.size
    workers.each { |t| assert_operator t.gvl_wait_share, :>, 0.3, "#{t.name} shares one GVL with two others" }
    assert_conservation(report)
    assert_edges_sum(report)
  end

  def test_timeline_and_round_trip
    assert_operator report.intervals.size, :>, 3
    Dir.mktmpdir do |dir|
      path = File.join(dir, "r.json.gz")
      report.save(path)
      loaded = Rperf::Contention::Report.load(path)
      assert_equal report.to_h["intervals"].to_a, loaded.to_h["intervals"].to_a
      assert_equal report.to_h["threads"], loaded.to_h["threads"]
    end
  end

  def test_analysis_views_or_a_clear_refusal
    if Rperf::HAVE_ANALYSIS
      assert_match(/GVL wait/, report.to_summary)
      assert_match(/digraph/, report.to_dot)
    else
      e = assert_raise(Rperf::UnsupportedError) { report.to_summary }
      assert_match(/no analysis module/, e.message)
    end
  end

  def test_samples_only_with_the_sampler
    result = Rperf.start(frequency: 1000, mode: :wall) { burn_work(0.05) }
    result = Rperf.stop if result == true
    assert_kind_of Rperf::Report, result
    if Rperf::HAVE_SAMPLER
      assert_operator result[:sampling_count], :>, 0
    else
      assert_equal 0, result[:sampling_count].to_i
    end
  end
end

# frozen_string_literal: true

# A program that exits with the profiler still running. Ruby frees its VM
# after the end procs while the sampler's worker thread lives on until the
# process exits; a tick in that window used to trigger a postponed job on
# the freed VM (SIGSEGV at exit). At 10 kHz nearly every such run crashed.
require "open3"
require "rbconfig"
require_relative "contention_helper"

class TestExitWhileProfiling < Test::Unit::TestCase
  INCLUDES = $LOAD_PATH.select { |d| File.exist?(File.join(d, "rperf.rb")) || Dir.exist?(File.join(d, "rperf")) }
                       .flat_map { |d| ["-I", File.expand_path(d)] }

  # A pipe ping-pong that hands the GVL over at every byte, then exit with
  # the profile running.
  WORKLOAD = <<~RUBY
    r, w = IO.pipe
    reader = Thread.new { 300.times { r.read(1) } }
    300.times { w.write("x"); Thread.pass }
    reader.join
  RUBY

  def run_child(source)
    Open3.capture3(RbConfig.ruby, *INCLUDES, "-e", source)
  end

  def test_exit_with_the_sampler_running_does_not_crash
    omit "no sampler on this platform" unless Rperf::HAVE_SAMPLER
    %i[wall cpu wall cpu wall cpu].each do |mode|
      out, err, status = run_child(<<~RUBY)
        require "rperf"
        Rperf.start(frequency: 10_000, mode: #{mode.inspect})
        #{WORKLOAD}
        puts "done"
      RUBY
      assert status.success?, "#{mode} mode: #{status.inspect}\n#{err}"
      assert_equal "done\n", out
      refute_match(/Segmentation fault|\[BUG\]|SIGSEGV/, err)
    end
  end

  # An at_exit the program registered before the extension loaded runs
  # after the worker was stopped; its report still has the samples taken
  # before exit began and the hooks' totals up to the stop.
  def test_an_earlier_at_exit_still_gets_the_whole_report
    omit "no sampler on this platform" unless Rperf::HAVE_SAMPLER
    out, err, status = run_child(<<~RUBY)
      at_exit do
        report = Rperf.stop
        main = report.threads.find { |t| t.name == "main" } || report.threads.first
        puts [report.stats["sampling_count"], report.threads.size, main.running_ns].inspect
      end
      require "rperf"
      Rperf.start(frequency: 10_000, mode: :wall)
      #{WORKLOAD}
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      x = 0
      x += 1 while Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0 < 0.05
    RUBY
    assert status.success?, "#{status.inspect}\n#{err}"
    samples, threads, main_running_ns = eval(out) # rubocop:disable Security/Eval
    # 50 ms of computing alone at 10 kHz is ~500 samples; under load far
    # fewer land, but never none.
    assert_operator samples, :>, 10, out
    assert_operator threads, :>=, 2, out
    assert_operator main_running_ns, :>=, 50_000_000, out
  end
end

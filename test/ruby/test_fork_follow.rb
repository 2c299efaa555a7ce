# frozen_string_literal: true

# A profile started in a parent restarts in each forked child (Rperf::Fork):
# the same options, the child's own threads and pid, its refcount and label
# as they were at the fork so the blocks it is inside still balance.
require "json"
require "tmpdir"
require_relative "contention_helper"

class TestForkFollow < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  # Runs the block in a forked child and returns what it returned
  # (JSON-able), failing on a crash or a non-zero exit.
  def in_child(&block)
    r, w = IO.pipe
    pid = fork do
      r.close
      w.write(JSON.generate(block.call))
      w.close
      exit!(0)
    rescue Exception => e # rubocop:disable Lint/RescueException -- reported to the parent
      w.write(JSON.generate("error" => "#{e.class}: #{e.message}"))
      exit!(1)
    end
    w.close
    out = r.read
    _, status = Process.wait2(pid)
    assert status.success?, out
    JSON.parse(out)
  ensure
    r&.close
  end

  def test_a_child_gets_its_own_profile_with_the_parents_options
    Rperf.start(mode: :wall, frequency: 500, max_threads: 64)
    parent_threads = cpu_threads(2, 0.05)
    got = in_child do
      t = Thread.new { burn_work(0.02) }
      t.join
      report = Rperf.stop
      { "running" => true, "pid" => report.to_h["meta"]["pid"], "mode" => report.to_h["meta"]["mode"],
        "frequency" => report.to_h["meta"]["frequency"], "threads" => report.threads.size,
        "samples" => report.to_h["samples"].size }
    end
    parent_threads.each(&:join)
    assert_equal "wall", got["mode"]
    assert_equal 500, got["frequency"]
    refute_equal Process.pid, got["pid"]
    assert_equal 2, got["threads"], "the forking thread and the child's own; not the parent's"
    assert_operator got["samples"], :>, 0
    assert_equal Process.pid, Rperf.stop.to_h["meta"]["pid"]
  end

  # A fork inside Rperf.profile and Rperf.label (deferred profile): the
  # child records inside the blocks and leaves them without unbalancing.
  def test_refcount_and_label_follow_the_fork
    Rperf.start(mode: :counters, defer: true)
    got = Rperf.profile(job: "outer") do
      in_child do
        inside = Rperf.labels
        before = Rperf.thread_contention[:running_ns]
        burn_work(0.01)
        recorded = Rperf.thread_contention[:running_ns] - before
        { "labels" => inside.transform_keys(&:to_s), "recorded" => recorded,
          "refcount" => Rperf.__send__(:_c_refcount) }
      end
    end
    assert_equal({ "job" => "outer" }, got["labels"])
    assert_equal 1, got["refcount"]
    assert_operator got["recorded"], :>, 5_000_000, "the child records inside the profile block"
    assert_equal 0, Rperf.__send__(:_c_refcount)
  end

  def test_follow_forks_false_leaves_the_child_without_a_profile
    Rperf.start(mode: :counters, follow_forks: false)
    got = in_child { { "running" => Rperf.running? } }
    assert_equal false, got["running"]
    assert_raise_with_message(ArgumentError, /follow_forks: 1 is invalid/) do
      Rperf.stop
      Rperf.start(mode: :counters, follow_forks: 1)
    end
  end

  # A child writes to the output with its pid in the name, never over the
  # parent's file.
  def test_a_child_writes_its_own_output
    Dir.mktmpdir do |dir|
      path = File.join(dir, "profile.json")
      Rperf.start(mode: :wall, output: path)
      child = in_child do
        Rperf.stop
        { "pid" => Process.pid }
      end["pid"]
      Rperf.stop
      assert_equal Process.pid, JSON.parse(File.read(path))["meta"]["pid"]
      assert_equal child, JSON.parse(File.read(File.join(dir, "profile.#{child}.json")))["meta"]["pid"]
    end
  end
end

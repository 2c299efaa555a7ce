# frozen_string_literal: true

# Code written for rperf 0.7 runs unchanged: the Ruby API usage of its
# README and quick reference (block form with output:, manual start/stop,
# Rperf.save by file name, snapshots, deferred profiles, labels), with the
# "code to profile" filled in. The results must make sense: samples in cpu
# mode name the computing method and their weights add up to the CPU time
# it used; labels carry their samples; saved files read back.
require "tmpdir"
require_relative "test_sampler_helper"

class TestRperf07Compat < Test::Unit::TestCase
  include SamplerTestHelper

  def teardown
    ensure_stopped
  end

  def fib(n)
    return n if n <= 1

    fib(n - 1) + fib(n - 2)
  end

  # Runs the block in an empty directory (the usage writes relative paths).
  def in_tmpdir(&block)
    Dir.mktmpdir { |dir| Dir.chdir(dir, &block) }
  end

  def cpu_of
    before = thread_cpu
    yield
    thread_cpu - before
  end

  # Weight (s) of the samples whose frames name `label`, and of all samples.
  def weights(data, label)
    samples = data[:aggregated_samples]
    total = samples.sum { |_, weight, _, _| weight } / 1e9
    named = samples.sum { |frames, weight, _, _| frames.any? { |(_, l)| l.include?(label) } ? weight : 0 } / 1e9
    [named, total]
  end

  def test_block_form_with_output_and_the_fib_example
    in_tmpdir do
      cpu = nil
      # Block form — profiles and saves to file
      data = Rperf.start(output: "profile.json.gz", frequency: 500, mode: :cpu) do
        cpu = cpu_of { fib(30) }
      end
      refute Rperf.running?
      assert File.exist?("profile.json.gz"), "output: was written at the end of the block"
      saved = Rperf::Report.load("profile.json.gz")
      assert_equal data[:aggregated_samples], saved[:aggregated_samples]
      assert_equal :cpu, data[:mode]
      assert_equal 500, data[:frequency]
      named, total = weights(data, "fib")
      assert_operator data[:aggregated_samples].size, :>, 0
      assert_operator total, :<=, cpu * 1.05 + 0.004, "cpu weights never exceed the CPU time"
      assert_operator total, :>=, cpu * 0.7, "cpu weights cover the CPU time used"
      assert_operator named, :>=, total * 0.9, "the computing method carries the weight"

      data = Rperf.start(frequency: 1000, mode: :cpu) do
        fib(28)
      end
      Rperf.save("profile.txt", data)
      assert_match(/^Threads/, File.read("profile.txt")) if Rperf::HAVE_ANALYSIS
    end
  end

  def test_manual_start_stop_snapshot_and_save
    in_tmpdir do
      # Manual start/stop
      Rperf.start(frequency: 1000, mode: :wall)
      fib(26)
      snap = Rperf.snapshot
      Rperf.save("snap.json.gz", snap)
      snap = Rperf.snapshot(clear: true) # reset after snapshot
      sleep 0.05
      data = Rperf.stop
      Rperf.save("profile.json.gz", data)

      assert_operator snap[:aggregated_samples].size, :>, 0
      assert_equal :wall, data[:mode]
      assert_equal data[:duration_ns], Rperf::Report.load("profile.json.gz")[:duration_ns]
      assert_operator Rperf::Report.load("snap.json.gz")[:sampling_count], :>, 0
      # After the clear: only the sleep, wall time in [GVL blocked].
      blocked = data[:aggregated_samples].sum do |frames, weight, _, _|
        frames.first&.last == "[GVL blocked]" ? weight : 0
      end
      assert_in_delta 0.05, blocked / 1e9, 0.03
      %i[trigger_count sampling_count sampling_time_ns detected_thread_count unique_frames unique_stacks
         start_time_ns duration_ns label_sets].each do |key|
        assert data.key?(key), key.inspect
        refute_nil data.fetch(key), key.inspect
      end
      assert_equal data[:threads].size, data.dig(:detected_thread_count)
      assert_equal data[:threads][0][:seq], data.dig(:threads, 0, :seq)
      assert_nil data[:no_such_key]
      assert_raise(KeyError) { data.fetch(:no_such_key) }
    end
  end

  def test_deferred_profile_and_labels
    # Deferred start + targeted profiling
    Rperf.start(defer: true, mode: :wall)
    cpu = nil
    Rperf.profile(endpoint: "/users") do
      cpu = cpu_of { fib(27) }
    end
    fib(25) # not profiled
    # Labels (annotate samples with context)
    inside = nil
    Rperf.label(request: "abc") do
      inside = Rperf.labels
    end
    data = Rperf.stop

    assert_equal({ request: "abc" }, inside)
    label_sets = data[:label_sets]
    id = label_sets.index({ endpoint: "/users" })
    assert id, label_sets.inspect
    labelled = data[:aggregated_samples].select { |_, _, _, set| set == id }
    assert_operator labelled.size, :>, 0
    weight = labelled.sum { |_, w, _, _| w } / 1e9
    assert_operator weight, :>=, cpu * 0.7, "the profiled block's time is under its label"
    all = data[:aggregated_samples].sum { |_, w, _, _| w } / 1e9
    assert_operator all, :<, weight + 0.01, "time outside the profile block is not sampled"
  end

  # The quick reference also saves pprof and collapsed stacks.
  def test_pprof_and_collapsed_saves
    omit("no analysis module in this build") unless Rperf::HAVE_ANALYSIS
    data = Rperf.start(frequency: 1000, mode: :cpu) { fib(26) }
    in_tmpdir do
      Rperf.save("profile.pb.gz", data)
      pprof = File.binread("profile.pb.gz")
      assert_equal [0x1f, 0x8b], pprof.bytes.first(2), "pprof files are gzip"
      Rperf.save("profile.collapsed", data)
      lines = File.readlines("profile.collapsed", chomp: true)
      assert_operator lines.size, :>, 0
      total = lines.sum { |l| Integer(l[/ (\d+)\z/, 1]) }
      assert_equal data[:aggregated_samples].sum { |_, w, _, _| w }, total, "folded weights are the samples'"
      assert(lines.any? { |l| l.include?("fib") }, lines.first(3).inspect)
    end
  end
end

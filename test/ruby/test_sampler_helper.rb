# frozen_string_literal: true

# Shared helpers of the sampler tests (test_sampler_*.rb): reading weights
# out of a report, burning CPU, running Ruby in a child process. It defines
# no tests.
require "test/unit"
require "rbconfig"
require "rperf"

module SamplerTestHelper
  SYNTHETIC = ["[GVL blocked]", "[GVL wait]", "[GC marking]", "[GC sweeping]"].freeze

  module_function

  def thread_cpu
    Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
  end

  def monotonic
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Burns about `seconds` of this thread's CPU time in plain Ruby calls.
  def burn(seconds)
    stop_at = thread_cpu + seconds
    n = 0
    n += spin_step while thread_cpu < stop_at
    n
  end

  def spin_step
    (1..200).sum { |i| i * i }
  end

  def report_of(result)
    result.fetch(:report)
  end

  def stack_labels(report, stack_id)
    report["stacks"].fetch(stack_id).map { |frame_id| report["frames"].fetch(frame_id)[1] }
  end

  # Sum of sample weights (ns) matching the block |labels_leaf_first, seq, label_set|.
  def weight(report, &pick)
    report["samples"].sum do |stack_id, weight_ns, seq, label_set|
      pick.call(stack_labels(report, stack_id), seq, label_set) ? weight_ns : 0
    end
  end

  def synthetic_weight(report, name, seq: nil)
    weight(report) { |labels, s, _| labels.first == name && (seq.nil? || s == seq) }
  end

  def thread_weight(report, seq)
    weight(report) { |_, s, _| s == seq }
  end

  def seq_of(report, name)
    thread = report["threads"].find { |t| t["name"] == name }
    thread && thread["seq"]
  end

  # Runs `code` in a child Ruby with this load path; returns [stdout, status].
  def run_ruby(code, env = {})
    args = $LOAD_PATH.grep_v(%r{/gems/|/lib/ruby/}).flat_map { |dir| ["-I", dir] }
    IO.popen(env, [RbConfig.ruby, *args, "-e", code], err: %i[child out], &:read).then { |out| [out, $?] }
  end

  def ensure_stopped
    Rperf.stop if Rperf.running?
  end
end

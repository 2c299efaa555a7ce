# frozen_string_literal: true

# bench/hook_breakdown.rb — where a GVL event's time goes inside the hooks, by part.
#
#   ruby -I lib -I <ext build dir> bench/hook_breakdown.rb [--pin CPU] [--freq HZ] [variant ...]
#
# For each variant of bench/bench_sampler.rb (default: counters wall; also hooks1hz, wall100, cpu) it
# runs one child of workload (b) under `perf record -e cpu-clock` (pinned with --pin, default CPU 1)
# and sums the child's samples of the symbols each part of an event runs in: the clock read, the
# dispatch and slot lookup, the state machine on the slot, the blocked-cause classification (leaf
# frame walk; cause table probe and path check), the timeline push, the wait edges and holder ring,
# and the sampler's off-GVL weights. It prints each part as a share of the process's samples and of
# the hooks' total: shares are the steady measure on a shared machine (sampling slows the run, so
# times derived from it would be inflated).
#
# The extension is link-time optimised: a function the compiler inlined is counted in its caller's
# part (most of the state machine, the deferral and ring pushes, the interval push and the sampler's
# weights are inlined into handle_event, so "dispatch" holds them), and suffixes the compiler adds
# (.lto_priv.0, .part.0, .constprop.0, .isra.0) are ignored.
# It does NOT attribute frames by caller: libruby's frame walk is counted as classification, though
# a due off-GVL sample walks the stack through the same functions (rare at 1 kHz on (b)). Nor does it
# see the VM's own cost of calling a hook, which the yardstick of bench_sampler.rb pays as well.
require "open3"
require "rbconfig"
require "tmpdir"

module HookBreakdown
  PARTS = {
    "clock read (vDSO)" => %w[__vdso_clock_gettime clock_gettime@@GLIBC_2.17 clock_gettime],
    "dispatch + slot lookup" => %w[thread_event handle_event dispatch identify_ractor rperf_slot_claim
                                   rperf_slot_find rb_internal_thread_specific_get rperf_hook_count_event
                                   rperf_contention_recording rperf_hook_timed_end],
    "state machine (slot, seqlock)" => %w[rperf_count_ready rperf_count_resumed rperf_count_suspended
                                          rperf_on_ready rperf_on_resumed rperf_on_suspended rperf_on_exited
                                          close_for_ready close_for_resumed charge settle_waiter releaser_of
                                          rperf_native_tid rperf_slot_by_seq switch_method begin_blocked
                                          add_release method_index leaf_method_index],
    "classification: leaf frame walk" => %w[rperf_cause_table_leaf rb_profile_thread_frames
                                            thread_profile_frames rb_profile_thread_frames@plt],
    "classification: table probe + path" => %w[rperf_cause_table_intern rb_profile_frame_path waitable_leaf
                                               rperf_cause_table_cause_if_resolved rperf_interval_cause_byte],
    "timeline (interval push)" => %w[emit_interval rperf_interval_buffer_push rperf_interval_encode],
    "edges + holder ring" => %w[rperf_wait_defer rperf_holder_ring_push rperf_holder_ring_reclaim_handoff
                                rperf_holder_ring_resume push_locked defer_locked flush_locked
                                attribute_locked batch_add batch_spill table_add_locked spin_lock edge_hash],
    "sampler off-GVL record" => %w[rperf_sampler_record_resumed accumulate emit_pending prime_slot
                                   prime_slot_slow rperf_sample_buffers_write state_of]
  }.freeze
  PART_OF = PARTS.flat_map { |part, syms| syms.map { [_1, part] } }.to_h.freeze
  # Only these objects: a symbol of the same name elsewhere is not the hooks'.
  OBJECTS = /\A(rperf_ext|libruby|\[vdso\]|libc)/

  module_function

  def shares(report_text)
    acc = PARTS.keys.to_h { [_1, 0.0] }
    report_text.each_line do |line|
      m = line.match(/^\s+([\d.]+)%\s+(\S+)\s+\[[.k]\]\s+(\S+)/) or next
      part = PART_OF[m[3].sub(/(\.(lto_priv|part|constprop|isra)\.\d+)+\z/, "")]
      acc[part] += m[1].to_f if part && m[2].match?(OBJECTS)
    end
    acc
  end

  def run(variant, pin, freq)
    Dir.mktmpdir("hook_breakdown") do |dir|
      data = File.join(dir, "perf.data")
      bench = File.expand_path("bench_sampler.rb", __dir__)
      load_path = $LOAD_PATH.select { |d| File.exist?(File.join(d, "rperf.rb")) || Dir.exist?(File.join(d, "rperf")) }
      cmd = ["perf", "record", "-q", "-e", "cpu-clock", "-F", freq.to_s, "-o", data, "taskset", "-c", pin,
             RbConfig.ruby, *load_path.flat_map { ["-I", _1] }, bench, "--child", "b", variant]
      _out, err, st = Open3.capture3(*cmd)
      abort "hook_breakdown: #{variant}: perf record failed: #{err.lines.last}" unless st.success?
      text, err, st = Open3.capture3("perf", "report", "-i", data, "--no-children", "--sort", "dso,symbol",
                                     "--stdio", "-g", "none")
      abort "hook_breakdown: perf report failed: #{err.lines.last}" unless st.success?
      shares(text)
    end
  end

  def main(argv)
    pin = "1"
    freq = 10_000
    variants = []
    until argv.empty?
      case (arg = argv.shift)
      when "--pin" then pin = argv.shift.to_s
      when "--freq" then freq = Integer(argv.shift)
      else variants << arg
      end
    end
    variants = %w[counters wall] if variants.empty?
    variants.each do |variant|
      acc = run(variant, pin, freq)
      total = acc.values.sum
      printf("%s (workload b, pinned to CPU %s): the hooks %.2f %% of the process's samples\n", variant, pin, total)
      acc.each do |part, pct|
        printf("  %-38s %5.2f %%  %5.1f %% of the hooks\n", part, pct, total.positive? ? pct * 100 / total : 0)
      end
    end
  end
end

HookBreakdown.main(ARGV.dup) if $PROGRAM_NAME == __FILE__

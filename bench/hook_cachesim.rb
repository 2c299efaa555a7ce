# frozen_string_literal: true

# bench/hook_cachesim.rb — what one GVL event costs inside the hooks, in instructions and cache misses.
#
#   ruby -I lib -I <ext build dir> bench/hook_cachesim.rb [--round-trips N] [variant ...]
#
# For each variant of bench/bench_sampler.rb (default: counters wall) it runs workload (b) with N round
# trips per pair (default 5,000: about 240,000 events) under `valgrind --tool=callgrind --cache-sim=yes`
# with collection switched on only inside the thread-event callback (`--toggle-collect=thread_event*`),
# so everything the hooks run and nothing else is counted, and prints per GVL event: instructions,
# L1 instruction misses, L1 data misses (reads + writes) and last-level misses, then the instructions
# by part (the parts of bench/hook_breakdown.rb, code inlined into the callback assigned by its source
# file; what no part names, such as libruby's helpers of the frame walk, counts as "other"). The event
# count is the profiler's own (`hook_events`).
#
# Figures are exact for the run but come from valgrind's model of this machine's caches, without the
# kernel's code, which on real hardware evicts more between two events; instruction counts are not
# times. It does NOT see the GC hooks (a different callback) or anything outside the callback, such
# as what the hooks' cache traffic costs the program's own code (bench_sampler.rb --batch sees that).
require "json"
require "open3"
require "rbconfig"
require "tmpdir"
require_relative "bench_sampler"
require_relative "hook_breakdown"

module HookCachesim
  # The extension is link-time optimised, so most of an event runs inlined into the callback
  # (handle_event): callgrind still names the source file of each inlined line, and these files
  # say which part that code belongs to. Other functions are classified by name, as perf's are.
  INLINED_INTO = %w[handle_event thread_event dispatch].freeze
  FILE_PART = {
    "gvl_hooks.c" => "dispatch + slot lookup", "thread_slot.c" => "dispatch + slot lookup",
    "thread_slot.h" => "dispatch + slot lookup", "clock.h" => "clock read (vDSO)",
    "contention_events.c" => "state machine (slot, seqlock)",
    "contention_events.h" => "state machine (slot, seqlock)", "cause_table.c" => "classification: table probe + path",
    "interval_codec.c" => "timeline (interval push)", "interval_buffer.c" => "timeline (interval push)",
    "wait_edges.c" => "edges + holder ring", "sampler_hooks.c" => "sampler off-GVL record",
    "sampler_state.h" => "sampler off-GVL record",
    "sample_buffer.c" => "sampler off-GVL record"
  }.freeze

  module_function

  # Child: (b) with `round_trips` per pair under `variant`; prints the hooks' event count.
  def child(variant, round_trips)
    require_relative "workloads/gvl_switch"
    require "rperf"
    BenchWorkloads.gvl_switch(2)
    Rperf.start(**BenchSampler::START.fetch(variant))
    BenchWorkloads.gvl_switch(round_trips)
    stats = BenchSampler.stats_of(Rperf.stop)
    puts JSON.generate({ "hook_events" => stats.fetch("hook_events") })
  end

  # Totals and Ir per part from callgrind_annotate's per-function table.
  def parse(text)
    header = nil
    totals = nil
    parts = Hash.new(0)
    text.each_line do |line|
      header ||= line.split.drop(2) if line.start_with?("Events shown:")
      next unless header && line.match?(/\A\s*[\d,]+ /)

      numbers = line.scan(/([\d,]+|\.)(?: \([\d. ]+%\))?\s+/).flatten.take(header.size)
      values = header.zip(numbers.map { _1 == "." ? 0 : _1.delete(",").to_i }).to_h
      if line.include?("PROGRAM TOTALS")
        totals = values
      elsif (m = line.match(%r{([^\s/]+):([A-Za-z_][\w.@]*)(?: \[|\s*\z)}))
        name = m[2].sub(/(\.(lto_priv|part|constprop|isra)\.\d+)+\z/, "")
        part = (FILE_PART[m[1]] if INLINED_INTO.include?(name)) || HookBreakdown::PART_OF[name] || "other"
        parts[part] += values.fetch("Ir", 0)
      end
    end
    abort "hook_cachesim: no totals in callgrind_annotate's output" unless totals
    [totals, parts]
  end

  def run(variant, round_trips, load_path)
    Dir.mktmpdir("hook_cachesim") do |dir|
      out = File.join(dir, "callgrind.out")
      cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--toggle-collect=thread_event*",
             "--callgrind-out-file=#{out}", RbConfig.ruby, *load_path.flat_map { ["-I", _1] }, __FILE__,
             "--child", variant, round_trips.to_s]
      stdout, err, st = Open3.capture3(*cmd)
      abort "hook_cachesim: #{variant}: valgrind failed: #{err.lines.last(3).join}" unless st.success?
      events = JSON.parse(stdout.lines.last).fetch("hook_events")
      text, err, st = Open3.capture3("callgrind_annotate", "--inclusive=no", "--threshold=100", out)
      abort "hook_cachesim: callgrind_annotate failed: #{err.lines.last}" unless st.success?
      [events, *parse(text)]
    end
  end

  def main(argv)
    round_trips = 5_000
    variants = []
    until argv.empty?
      case (arg = argv.shift)
      when "--child" then return child(argv.shift, Integer(argv.shift))
      when "--round-trips" then round_trips = Integer(argv.shift)
      else
        abort "hook_cachesim: unknown variant #{arg}; known: #{BenchSampler::START.keys.join(', ')}" unless
          BenchSampler::START.key?(arg)
        variants << arg
      end
    end
    abort "hook_cachesim: valgrind is not installed" unless system("valgrind --version >/dev/null 2>&1")
    variants = %w[counters wall] if variants.empty?
    load_path = BenchSampler.profiler_load_path
    variants.each do |variant|
      events, totals, parts = run(variant, round_trips, load_path)
      per = ->(key) { totals.fetch(key, 0).to_f / events }
      printf("%s (workload b, %d round trips a pair): %d events; per event: %.0f instructions, " \
             "%.2f L1i misses, %.2f L1d misses, %.4f last-level misses\n",
             variant, round_trips, events, per.("Ir"), per.("I1mr"), per.("D1mr") + per.("D1mw"),
             per.("ILmr") + per.("DLmr") + per.("DLmw"))
      parts.sort_by { -_2 }.each { |part, ir| printf("  %-38s %6.0f instructions an event\n", part, ir.to_f / events) }
    end
  end
end

HookCachesim.main(ARGV.dup) if $PROGRAM_NAME == __FILE__

# frozen_string_literal: true

# bench/bench_memory.rb — the profiler's memory and its stop/save time.
#
# For each workload it runs, interleaved, N rounds of: plain Ruby (the
# extension not even loaded), counters mode (Rperf.start(mode: :counters))
# and full attribution (Rperf.start defaults: wall, 1 kHz, timeline, wait
# graph). Every run is a fresh process. Each child prints one JSON line:
# the workload's wall time; the peak RSS (VmHWM) of the whole process; and,
# with a profiler, the peak RSS of each phase — recording, `stop`, `save`
# of the report as JSON to a temporary file — found by resetting the
# kernel's high-water mark (/proc/self/clear_refs, "5") between phases; the
# time of `stop` and of `save`, the number of intervals and the JSON's size.
#
# Workloads: "b" is the GVL-switch ping-pong scaled to fill the default
# timeline bound (25,000 round trips make about 1.2 million intervals here:
# the report holds max_intervals = 1,000,000, the rest is counted dropped); "mixed" is four CPU-bound threads beside
# four ping-pong pairs; "cpu" is four CPU-bound threads (hardly any GVL
# events: the CPU-bound check). The figures printed are medians over rounds;
# "over plain" is the median over rounds of (that round's peak RSS minus the
# same round's plain peak RSS), and "paired overhead" the median over rounds
# of (run / that round's plain run).
#
#   ruby -I lib -I <ext build dir> bench/bench_memory.rb [--runs 5] [--workload b|mixed|cpu|all]
#        [--round-trips N]
#
# --stop-save times only `stop` and `save` of the full-attribution run (the
# other variants are not run): wall and CPU time of each phase (the CPU
# time of the thread that calls them: on this shared machine wall times move
# several-fold with the load, CPU time much less), medians over rounds.
# With --base DIR[:DIR...] (the lib and extension directories of another
# build) each round runs that build too, alternating which goes first, and
# the report adds the median of the paired per-round differences.
#
#   ruby -I lib -I <ext build dir> bench/bench_memory.rb --stop-save [--runs 7] [--base DIRS]
require "etc"
require "json"
require "tmpdir"
require "rbconfig"
require_relative "stats"

module BenchMemory
  WORKLOADS = {
    "b" => "eight threads ping-ponging 1-byte pipe messages (fills the 1M-interval timeline)",
    "mixed" => "four CPU-bound threads beside four ping-pong pairs",
    "cpu" => "four CPU-bound threads"
  }.freeze
  VARIANTS = %w[plain counters full].freeze
  START = { "counters" => { mode: :counters }, "full" => {} }.freeze
  DEFAULT_ROUND_TRIPS = 25_000

  module_function

  def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  def thread_cpu = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)

  # Peak and current RSS of this process in bytes (/proc/self/status).
  def rss
    status = File.read("/proc/self/status")
    { hwm: status[/^VmHWM:\s+(\d+)/, 1].to_i * 1024, rss: status[/^VmRSS:\s+(\d+)/, 1].to_i * 1024 }
  end

  # Restarts the peak-RSS counter at the current RSS (Linux >= 4.0).
  def reset_peak = File.write("/proc/self/clear_refs", "5")

  def run_workload(workload, round_trips)
    case workload
    when "b" then BenchWorkloads.gvl_switch(round_trips)
    when "cpu" then BenchWorkloads.cpu_threads
    when "mixed"
      cpu = Thread.new { BenchWorkloads.cpu_threads }
      BenchWorkloads.gvl_switch(round_trips / 4)
      cpu.value
    end
  end

  def child(workload, variant, round_trips)
    require_relative "workloads/cpu_threads"
    require_relative "workloads/gvl_switch"
    BenchWorkloads.gvl_switch(2)
    BenchWorkloads.cpu_threads(2)
    out = {}
    if variant != "plain"
      require "rperf"
      GC.start
      out["before_start"] = rss[:rss]
      reset_peak
      Rperf.start(**START.fetch(variant))
    end
    t0 = monotonic
    run_workload(workload, round_trips)
    out["elapsed"] = monotonic - t0
    if variant != "plain"
      out["record_peak"] = rss[:hwm]
      reset_peak
      t0 = monotonic
      c0 = thread_cpu
      report = Rperf.stop
      out["stop_cpu_s"] = thread_cpu - c0
      out["stop_s"] = monotonic - t0
      out["stop_peak"] = rss[:hwm]
      out["after_stop"] = rss[:rss]
      out["intervals"] = report.to_h.fetch("intervals", []).size
      out["dropped_intervals"] = report.stats["dropped_intervals"].to_i
      reset_peak
      Dir.mktmpdir("rperf-bench-memory") do |dir|
        path = File.join(dir, "report.json")
        t0 = monotonic
        c0 = thread_cpu
        report.save(path)
        out["save_cpu_s"] = thread_cpu - c0
        out["save_s"] = monotonic - t0
        out["save_peak"] = rss[:hwm]
        out["json_bytes"] = File.size(path)
      end
    end
    out["peak"] = [rss[:hwm], out["record_peak"].to_i, out["stop_peak"].to_i].max
    puts JSON.generate(out)
  end

  def run_child(workload, variant, load_path, round_trips)
    args = load_path.flat_map { |dir| ["-I", dir] }
    cmd = [RbConfig.ruby, *args, __FILE__, "--child", workload, variant, round_trips.to_s]
    out = IO.popen(cmd, &:read)
    raise "child #{workload}/#{variant} failed" unless $?.success?

    JSON.parse(out.lines.last)
  end

  def mib(bytes) = bytes && format("%.1f", bytes / 1048576.0)

  def main(argv)
    runs = 5
    selected = WORKLOADS.keys
    round_trips = DEFAULT_ROUND_TRIPS
    stop_save = false
    workload_given = false
    base = nil
    while (arg = argv.shift)
      case arg
      when "--runs" then runs = Integer(argv.shift)
      when "--stop-save" then stop_save = true
      when "--base" then base = argv.shift.split(":")
      when "--round-trips" then round_trips = Integer(argv.shift)
      when "--workload"
        chosen = argv.shift
        workload_given = true
        selected = chosen == "all" ? WORKLOADS.keys : [chosen]
        abort "bench_memory: --workload must be one of #{WORKLOADS.keys.join(', ')} or all" unless (selected - WORKLOADS.keys).empty?
      when "--child" then return child(argv.shift, argv.shift, Integer(argv.shift))
      else abort "bench_memory: unknown argument #{arg}"
      end
    end
    load_path = $LOAD_PATH.select { |dir| File.exist?(File.join(dir, "rperf.rb")) || Dir[File.join(dir, "rperf_ext.*")].any? }
    return stop_save_main(runs, workload_given ? selected : ["b"], round_trips, load_path, base) if stop_save

    puts "ruby #{RUBY_VERSION}, #{runs} interleaved rounds, #{Etc.nprocessors} CPUs, #{round_trips} round trips for (b)"
    selected.each do |workload|
      results = VARIANTS.to_h { |v| [v, []] }
      runs.times { VARIANTS.each { |v| results[v] << run_child(workload, v, load_path, round_trips) } }
      report(workload, results)
    end
  end

  # --stop-save: the full-attribution run only, "this" build and (with
  # --base) the other one in the same rounds.
  def stop_save_main(runs, selected, round_trips, load_path, base)
    builds = { "this" => load_path }
    builds["base"] = base if base
    puts "ruby #{RUBY_VERSION}, #{runs} rounds, #{Etc.nprocessors} CPUs, #{round_trips} round trips for (b); " \
         "stop and save of the full-attribution run, wall (CPU) ms"
    selected.each do |workload|
      results = builds.keys.to_h { |b| [b, []] }
      runs.times do |round|
        order = round.odd? ? builds.keys.reverse : builds.keys
        order.each { |b| results[b] << run_child(workload, "full", builds[b], round_trips) }
      end
      stop_save_report(workload, results)
    end
  end

  def stop_save_report(workload, results)
    puts
    puts "workload #{workload}: #{WORKLOADS[workload]}"
    total = ->(r, kind) { r["stop#{kind}_s"] + r["save#{kind}_s"] }
    results.each do |build, runs|
      m = ->(f) { BenchStats.median(runs.map(&f)) * 1e3 }
      puts format("  %-5s stop %.0f (%.0f) + save %.0f (%.0f) = %.0f (%.0f) ms; min total %.0f (%.0f); " \
                  "%d intervals, JSON %s MiB, phase peaks over the RSS before start: stop %s, save %s MiB",
                  build, m.(->(r) { r["stop_s"] }), m.(->(r) { r["stop_cpu_s"] }),
                  m.(->(r) { r["save_s"] }), m.(->(r) { r["save_cpu_s"] }),
                  m.(->(r) { total.(r, "") }), m.(->(r) { total.(r, "_cpu") }),
                  runs.map { total.(_1, "") }.min * 1e3, runs.map { total.(_1, "_cpu") }.min * 1e3,
                  BenchStats.median(runs.map { _1["intervals"] }), mib(BenchStats.median(runs.map { _1["json_bytes"] })),
                  mib(BenchStats.median(runs.map { _1["stop_peak"] - _1["before_start"] })),
                  mib(BenchStats.median(runs.map { _1["save_peak"] - _1["before_start"] })))
    end
    return unless results["base"]

    diff = ->(kind) { BenchStats.median(results["this"].zip(results["base"]).map { |t, b| total.(t, kind) - total.(b, kind) }) * 1e3 }
    puts format("  this - base, paired per round: %+.0f ms wall, %+.0f ms CPU", diff.(""), diff.("_cpu"))
  end

  def report(workload, results)
    puts
    puts "workload #{workload}: #{WORKLOADS[workload]}"
    plain = results["plain"]
    puts format("  %-9s peak RSS %s MiB, workload %.0f ms", "plain", mib(BenchStats.median(plain.map { _1["peak"] })),
                BenchStats.median(plain.map { _1["elapsed"] }) * 1e3)
    (VARIANTS - ["plain"]).each do |variant|
      runs = results[variant]
      over = runs.zip(plain).map { |r, p| r["peak"] - p["peak"] }
      paired = runs.zip(plain).map { |r, p| r["elapsed"] / p["elapsed"] }
      m = ->(key) { BenchStats.median(runs.map { _1[key] }) }
      puts format("  %-9s peak RSS %s MiB (over plain %s MiB, %s..%s); paired overhead %+.1f%%",
                  variant, mib(m.("peak")), mib(BenchStats.median(over)), mib(over.min), mib(over.max), (BenchStats.median(paired) - 1) * 100)
      puts format("            phase peaks over the RSS before start: recording %s, stop %s, save %s MiB",
                  mib(m.("record_peak") - m.("before_start")), mib(m.("stop_peak") - m.("before_start")),
                  mib(m.("save_peak") - m.("before_start")))
      rate = (m.("intervals") + m.("dropped_intervals")) / m.("elapsed") # made by the run, kept or not
      puts format("            stop %.0f ms + save %.0f ms = %.0f ms; %d intervals (%d dropped), %.0f intervals/s recorded, " \
                  "JSON %s MiB", m.("stop_s") * 1e3, m.("save_s") * 1e3, BenchStats.median(runs.map { _1["stop_s"] + _1["save_s"] }) * 1e3,
                  m.("intervals"), m.("dropped_intervals"), rate, mib(m.("json_bytes")))
    end
  end
end

BenchMemory.main(ARGV.dup) if $PROGRAM_NAME == __FILE__

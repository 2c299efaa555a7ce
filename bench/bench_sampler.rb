# frozen_string_literal: true

# bench/bench_sampler.rb — overhead of the sampler and the GVL/GC hooks.
#
# For each workload ((a) four CPU-bound threads, (b) eight threads doing tiny
# blocking pipe IO, (mixed) four CPU-bound threads beside two pipe ping-pong
# pairs) it runs, interleaved, N rounds of: plain, profiled at
# 1 kHz in wall mode, profiled at 1 kHz in cpu mode, and the hooks alone
# (wall mode at 1 Hz). Every run is a fresh
# process (no warm-up carried between variants); the time measured is the
# workload alone, not start/stop. It prints, per workload and variant, the
# median wall time, the spread (min..max), the overhead ratio (median
# profiled / median plain), the median process CPU time of the workload
# (all threads, including the sampler's worker), the profiler's own counters (cost per sample =
# sampling_time_ns / sampling_count; cost per GVL event = hook_time_ns /
# hook_events), the Ractor-free tick/sample counts, the process's
# context switches during the workload (all threads, from getrusage), and the
# process's peak RSS (getrusage's ru_maxrss, read after Rperf.stop, so the
# report's building counts; paired: each round's run minus its plain run).
# A short summary table of the paired figures closes the output.
#
# "paired overhead" is the median over rounds of (that round's run / that
# round's plain run), steadier than the ratio of medians when the machine's
# speed drifts; "vs yardstick" the median over rounds of (run - that
# round's yardstick run) / that round's plain run, in points. --pin CPU runs every child under `taskset -c CPU`: on one
# CPU nothing waits for an idle CPU to wake up, so the figures are the
# profiler's CPU cost rather than the wake-up latencies of the machine.
# --batch runs every child under SCHED_BATCH (`chrt --batch 0`): a woken
# thread then no longer preempts the running one, so nothing the profiler
# wakes turns into extra context switches (woken readers that run while the
# GVL holder is preempted, only to sleep on the GVL again); the difference
# between a run with and without it is that amplification.
#
# --yardstick adds a counters-only hook (bench/yardstick: one clock read and
# one atomic add per GVL event, what a counters-only tool does) as a
# variant, built on the fly: the floor any event hook pays on this machine
# at this moment, to read the profiler's figures against. It also adds
# "yardstick_tick": that hook plus a native thread that wakes 1,000 times a
# second and does nothing, the floor of any design whose timer wakes a
# worker thread at 1 kHz (the wall and cpu variants' design). It runs
# "counters" (Rperf.start(mode: :counters): the profiler's hooks keeping
# per-thread totals only, no sampler) right after the yardstick, so each
# round pairs the two.
#
# --variants v1,v2 picks the variants (plain is always run, first): any of
# yardstick, yardstick_tick, counters, wall, cpu, hooks1hz, wall100 (wall
# mode at 100 Hz, timeline on: the log middlewares' setup before counters
# mode), hooks1hz_notimeline (hooks1hz without the timeline: hooks1hz minus
# it is the timeline's share), full, and with --peers the peers' variants.
#
# --base LIB_DIR,EXT_DIR runs every profiler variant a second time in each
# round with another build (e.g. the previous commit's), as "<variant>@base",
# so the two builds are compared side by side under the same drift.
#
#   ruby -I lib -I <ext build dir> bench/bench_sampler.rb [--runs 10] [--workload a|b|mixed|all] [--pin CPU] [--batch]
#        [--yardstick | --variants v1,v2,...] [--base LIB_DIR,EXT_DIR] [--peers DIR] [--against VARIANT]
#
# --against VARIANT adds a column to the summary: each variant against that
# one, paired per round in points of the plain run, with the quartiles and
# the rounds in which the variant was faster. The variants' order rotates
# by one each round. With --base it may name a base variant
# ("full@base"): each build's rounds against the other's.
#
# --peers DIR (a build of the peers' build.sh) allows the variants
# rperf09_wall and rperf09_cpu (rperf 0.9 at 1 kHz, inherit: false) and
# gvltools (its LocalTimer), run from DIR alone. "full" is full attribution:
# wall mode at 1 kHz with the timeline.
require "etc"
require "json"
require "tmpdir"
require "rbconfig"
require_relative "yardstick/build"
require_relative "stats"

module BenchSampler
  WORKLOADS = {
    "a" => ["cpu_threads", "four CPU-bound threads"],
    "b" => ["gvl_switch", "eight threads, tiny blocking pipe IO"],
    "mixed" => ["mixed_threads", "four CPU-bound threads beside two pipe ping-pong pairs"]
  }.freeze
  # hooks1hz: wall mode at 1 Hz, i.e. the GVL/GC hooks with (almost) no
  # sampling: wall minus hooks1hz is the sampler's own share.
  VARIANTS = %w[plain wall cpu hooks1hz].freeze
  YARDSTICK_VARIANTS = %w[plain yardstick counters yardstick_tick wall cpu hooks1hz].freeze
  # Rperf.start keywords of each profiler variant.
  START = {
    "wall" => { frequency: 1000, mode: :wall }, "cpu" => { frequency: 1000, mode: :cpu },
    "hooks1hz" => { frequency: 1, mode: :wall }, "wall100" => { frequency: 100, mode: :wall },
    "counters" => { mode: :counters },
    "hooks1hz_notimeline" => { frequency: 1, mode: :wall, timeline: false },
    "full" => { frequency: 1000, mode: :wall, timeline: true }
  }.freeze
  # Peer profilers (--peers DIR, a build of the peers' build.sh): the
  # directory under DIR each loads from, and how it starts and stops.
  PEERS = {
    "rperf09_wall" => "rperf09", "rperf09_cpu" => "rperf09", "gvltools" => "gvltools"
  }.freeze
  KNOWN = (%w[plain yardstick yardstick_tick] + START.keys + PEERS.keys).freeze

  module_function

  def monotonic
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def process_cpu
    Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)
  end

  # The process's context switches so far, voluntary plus involuntary, of
  # every thread it ever had (getrusage(RUSAGE_SELF) on Linux counts the
  # threads that have ended too), or nil where it cannot be read.
  def context_switches
    usage = rusage or return nil
    usage[RUSAGE_NVCSW_OFFSET, 16].unpack("q2").sum # ru_nvcsw, ru_nivcsw
  end

  # The process's peak resident set so far, in bytes, or nil.
  def peak_rss
    usage = rusage or return nil
    usage[RUSAGE_MAXRSS_OFFSET, 8].unpack1("q") * 1024 # ru_maxrss is in KiB on Linux
  end

  # getrusage(RUSAGE_SELF) as raw bytes, or nil where it cannot be read.
  def rusage
    @getrusage ||= begin
      require "fiddle"
      Fiddle::Function.new(Fiddle::Handle::DEFAULT["getrusage"], [Fiddle::TYPE_INT, Fiddle::TYPE_VOIDP], Fiddle::TYPE_INT)
    rescue LoadError, Fiddle::DLError
      false
    end
    return nil unless @getrusage && RUBY_PLATFORM.include?("linux") && Fiddle::SIZEOF_LONG == 8

    usage = Fiddle::Pointer.malloc(RUSAGE_BYTES, Fiddle::RUBY_FREE)
    @getrusage.call(0, usage).zero? ? usage : nil # RUSAGE_SELF
  end
  # struct rusage on 64-bit Linux: two timevals, then 14 longs: ru_maxrss is
  # the first, ru_nvcsw and ru_nivcsw are the last two.
  RUSAGE_BYTES = 144
  RUSAGE_MAXRSS_OFFSET = 32
  RUSAGE_NVCSW_OFFSET = 128

  # Child: run one workload once and print one JSON line.
  def child(workload, variant)
    require_relative "workloads/cpu_threads"
    require_relative "workloads/gvl_switch"
    require_relative "workloads/mixed_threads"
    method = WORKLOADS.fetch(workload).first
    BenchWorkloads.public_send(method, 2) # JIT-free warm-up of the code paths
    if variant.start_with?("yardstick")
      require "yardstick_hook"
      YardstickHook.start
      YardstickHook.start_ticker(1000) if variant == "yardstick_tick"
    elsif variant.start_with?("rperf09_")
      require "rperf"
      Rperf.start(mode: variant.delete_prefix("rperf09_").to_sym, frequency: 1000, inherit: false)
    elsif variant == "gvltools"
      require "gvltools"
      GVLTools::LocalTimer.enable
    elsif variant != "plain"
      require "rperf"
      Rperf.start(**START.fetch(variant))
    end
    s0 = context_switches
    t0 = monotonic
    c0 = process_cpu
    BenchWorkloads.public_send(method)
    elapsed = monotonic - t0
    cpu = process_cpu - c0
    switches = s0 && context_switches - s0
    stats = if PEERS.key?(variant)
              variant == "gvltools" ? GVLTools::LocalTimer.disable : Rperf.stop
              {} # the peers' own figures are not ours to compare
            elsif variant == "plain" || variant.start_with?("yardstick")
              {}
            else
              stats_of(Rperf.stop)
            end
    puts JSON.generate({ "elapsed" => elapsed, "cpu" => cpu, "switches" => switches, "peak_rss" => peak_rss,
                         "stats" => stats })
  end

  # The report's stats, whatever shape the Ruby API returns it in.
  def stats_of(result)
    report = result[:report] || result
    (report["stats"] || {}).select { |_, v| v.is_a?(Numeric) }
  end

  BASE_SUFFIX = "@base"
  MIB = 1024.0 * 1024

  def run_child(workload, variant, load_path, pin = nil)
    if variant.end_with?(BASE_SUFFIX)
      variant = variant.delete_suffix(BASE_SUFFIX)
      load_path = @base_load_path + load_path.reject { |dir| Dir.exist?(File.join(dir, "rperf")) || File.exist?(File.join(dir, "rperf.rb")) }
    end
    if PEERS.key?(variant)
      abort "bench_sampler: #{variant} needs --peers DIR" unless @peers
      load_path = [File.join(@peers, PEERS[variant], "lib")]
    end
    args = load_path.flat_map { |dir| ["-I", dir] }
    prefix = pin ? ["taskset", "-c", pin] : []
    prefix = ["chrt", "--batch", "0", *prefix] if @batch
    out = IO.popen([*prefix, RbConfig.ruby, *args, __FILE__, "--child", workload, variant], &:read)
    raise "child #{workload}/#{variant} failed" unless $?.success?

    JSON.parse(out.lines.last)
  end

  def main(argv)
    runs = 10
    pin = nil
    variants = VARIANTS
    selected = WORKLOADS.keys
    while (arg = argv.shift)
      case arg
      when "--runs" then runs = Integer(argv.shift)
      when "--workload"
        chosen = argv.shift
        selected = chosen == "all" ? WORKLOADS.keys : [chosen]
        abort "bench_sampler: --workload must be #{WORKLOADS.keys.join(', ')} or all" unless (selected - WORKLOADS.keys).empty?
      when "--pin" then pin = argv.shift.to_s
      when "--batch" then @batch = true
      when "--yardstick" then variants = YARDSTICK_VARIANTS
      when "--variants"
        variants = ["plain", *argv.shift.to_s.split(",").reject { _1 == "plain" }]
        unknown = variants - KNOWN
        abort "bench_sampler: unknown variant #{unknown.join(', ')}; known: #{KNOWN.join(', ')}" unless unknown.empty?
      when "--base"
        @base_load_path = argv.shift.to_s.split(",").map { File.expand_path(_1) }
        abort "bench_sampler: --base takes LIB_DIR,EXT_DIR" unless @base_load_path.size == 2
      when "--against" then @against = argv.shift.to_s
      when "--peers"
        @peers = File.expand_path(argv.shift.to_s)
        abort "bench_sampler: --peers DIR must hold rperf09/lib and gvltools/lib (build.sh DIR)" \
          unless PEERS.values.uniq.all? { Dir.exist?(File.join(@peers, _1, "lib")) }
      when "--child" then return child(argv.shift, argv.shift)
      else abort "bench_sampler: unknown argument #{arg}"
      end
    end
    load_path = profiler_load_path
    load_path += [YardstickBuild.build("bench_sampler")] if variants.any? { _1.start_with?("yardstick") }
    variants = variants.flat_map { |v| START.key?(v) ? [v, v + BASE_SUFFIX] : [v] } if @base_load_path
    # After --base added its variants: `--against full@base` pairs this
    # build's rounds with the base build's.
    abort "bench_sampler: --against #{@against} is not among the variants" if @against && !variants.include?(@against)
    puts "ruby #{RUBY_VERSION}, #{runs} interleaved runs per variant, 1 kHz, #{Etc.nprocessors} CPUs" \
         "#{pin ? ", every run pinned to CPU #{pin}" : ''}#{@batch ? ', SCHED_BATCH' : ''}"
    summaries = selected.map do |workload|
      results = variants.to_h { |v| [v, []] }
      # Each round starts one variant later, so no variant always follows
      # the same one (a run's cost can spill into the next: page cache, the
      # CPU's frequency, the host's other guests).
      runs.times { |round| variants.rotate(round).each { |v| results[v] << run_child(workload, v, load_path, pin) } }
      report(workload, results, variants)
      [workload, results]
    end
    summary(summaries, variants)
  end

  # The directories of $LOAD_PATH that hold the profiler (its Ruby files or
  # its extension), passed on to every child.
  def profiler_load_path
    $LOAD_PATH.select { |dir| File.exist?(File.join(dir, "rperf.rb")) || Dir[File.join(dir, "rperf_ext.*")].any? }
  end

  # One short row per workload and variant, the paired figures only (the
  # lines above carry the rest): what docs/performance.md's tables quote.
  def summary(summaries, variants)
    puts
    puts "summary (medians over rounds of each run against its round's plain and yardstick runs):"
    against = @against && format("vs %s", @against)
    puts format("  %-8s %-19s %9s %11s %10s %10s%s", "workload", "variant", "paired", "vs yardst.", "switches", "peak RSS",
                against ? format("  %-22s", against) : "")
    summaries.each do |workload, results|
      variants.each do |variant|
        next if variant == "plain"

        paired = (paired_ratio(results, variant, "elapsed") - 1) * 100
        over = points_over_yardstick(results, variant)&.then { format("%+.1f pt", _1) } || "—"
        switches = paired_difference(results, variant, "switches")&.then { format("%+d", _1) } || "—"
        rss = paired_difference(results, variant, "peak_rss")&.then { format("%+.1f MiB", _1 / MIB) } || "—"
        vs = @against && variant != @against ? against_cell(results, variant, @against) : ""
        puts format("  %-8s %-19s %+8.1f%% %11s %10s %10s  %s", workload, variant, paired, over, switches, rss, vs).rstrip
      end
    end
  end

  # The median over rounds of (that round's run / its plain run) of `key`.
  def paired_ratio(results, variant, key)
    BenchStats.median(results[variant].zip(results["plain"]).map { |run, base| run[key] / base[key] })
  end

  # The median over rounds of (that round's run - its plain run) of `key`,
  # or nil where a run could not read it.
  def paired_difference(results, variant, key)
    pairs = results[variant].zip(results["plain"])
    return nil unless pairs.flatten.all? { _1[key] }

    BenchStats.median(pairs.map { |run, base| run[key] - base[key] })
  end

  # --against OTHER: per round, (run - OTHER's run) / plain run in points;
  # the median, its middle half (quartiles) and the rounds where the
  # variant was the faster. Medians of 9 rounds moved by 10 points between
  # runs on a busy VM; the quartiles and the count say whether a difference
  # holds round after round.
  def against_cell(results, variant, other)
    points = results[variant].zip(results[other], results["plain"]).map do |run, them, base|
      (run["elapsed"] - them["elapsed"]) / base["elapsed"] * 100
    end.sort
    quartile = ->(q) { points[((points.size - 1) * q).round] }
    format("%+.1f pt (%+.1f..%+.1f), faster %d/%d", BenchStats.median(points), quartile.(0.25), quartile.(0.75),
           points.count(&:negative?), points.size)
  end

  # Points over the yardstick, per round: (run - yardstick run) / plain run;
  # nil without a yardstick (or for the yardstick itself).
  def points_over_yardstick(results, variant)
    return nil unless results.key?("yardstick") && variant != "yardstick"

    BenchStats.median(results[variant].zip(results["yardstick"], results["plain"]).map do |run, yard, base|
      (run["elapsed"] - yard["elapsed"]) / base["elapsed"] * 100
    end)
  end

  def report(workload, results, variants)
    puts
    puts "workload (#{workload}): #{WORKLOADS[workload].last}"
    plain = BenchStats.median(results["plain"].map { _1["elapsed"] })
    plain_cpu = BenchStats.median(results["plain"].map { _1["cpu"] })
    variants.each do |variant|
      times = results[variant].map { _1["elapsed"] }
      cpu = BenchStats.median(results[variant].map { _1["cpu"] })
      line = format("  %-19s median %7.1f ms  spread %7.1f..%7.1f ms  process CPU %7.1f ms (%+.1f%%)", variant,
                    BenchStats.median(times) * 1e3, times.min * 1e3, times.max * 1e3, cpu * 1e3, (cpu / plain_cpu - 1) * 100)
      # Whatever preempts the GVL holder lets woken threads run into the
      # held GVL and sleep again: each such switch costs microseconds the
      # hooks' own clock does not see.
      if (switches = paired_difference(results, variant, "switches"))
        line += format("  context switches %d (paired %+d)", BenchStats.median(results[variant].map { _1["switches"] }), switches)
      end
      if (rss = paired_difference(results, variant, "peak_rss"))
        line += format("  peak RSS %.1f MiB (paired %+.1f)", BenchStats.median(results[variant].map { _1["peak_rss"] }) / MIB,
                       rss / MIB)
      end
      if variant != "plain"
        ratio = BenchStats.median(times) / plain
        stats = results[variant].map { _1["stats"] }
        sum = ->(key) { stats.sum { _1[key].to_i } }
        per_sample = sum.("sampling_count").positive? ? sum.("sampling_time_ns") / sum.("sampling_count").to_f : 0
        per_event = sum.("hook_events").positive? ? sum.("hook_time_ns") / sum.("hook_events").to_f : 0
        ratios = times.map { _1 / plain }
        # Paired: each round's run over the same round's plain run. The
        # machine's speed drifts between rounds (on a VM by several times);
        # a pair shares most of that drift, so its ratio is steadier than a
        # ratio of medians taken over different moments.
        line += format("  paired overhead %+.1f%% (CPU %+.1f%%)", (paired_ratio(results, variant, "elapsed") - 1) * 100,
                       (paired_ratio(results, variant, "cpu") - 1) * 100)
        if (over = points_over_yardstick(results, variant))
          line += format("  vs yardstick %+.1f points (paired)", over)
        end
        if stats.all?(&:empty?) # the yardstick reports nothing of its own
          line += format("  overhead %+.1f%% (%+.1f..%+.1f)", (ratio - 1) * 100, (ratios.min - 1) * 100,
                         (ratios.max - 1) * 100)
          puts line
          next
        end
        line += format("  overhead %+.1f%% (%+.1f..%+.1f)  %.0f ns/sample  %.0f ns/GVL event  " \
                       "%d events  %d ticks  %d samples (%d by hooks)  dropped %d",
                       (ratio - 1) * 100, (ratios.min - 1) * 100, (ratios.max - 1) * 100, per_sample, per_event,
                       sum.("hook_events") / stats.size, sum.("trigger_count") / stats.size,
                       sum.("sampling_count") / stats.size, sum.("synthetic_samples") / stats.size,
                       sum.("dropped_samples") + sum.("dropped_aggregation"))
      end
      puts line
    end
  end
end

BenchSampler.main(ARGV.dup) if $PROGRAM_NAME == __FILE__

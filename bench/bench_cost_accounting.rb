# frozen_string_literal: true

# bench/bench_cost_accounting.rb — the profiler's CPU cost accounted from
# inside the process, part by part, for workloads whose wall-time overhead
# is below what this machine resolves (a CPU-bound program's: paired wall
# ratios of one build swing by ±10 % between series here).
#
# Each run is a fresh process that runs a workload profiled in one mode and
# reads, around the workload alone:
# - the process's CPU time (all threads);
# - the sampler worker's CPU time (its thread, "rperf-sampler", from
#   /proc/self/task/*/schedstat: nanoseconds on a CPU, exact);
# - the hooks' own time (stats.hook_time_ns: one GVL event in 1024 timed
#   in the hook, scaled to all events) and the samples' (stats.sampling_time_ns:
#   the postponed jobs and the hook-side stack captures, each timed);
# and prints the medians of each part as a share of the process's CPU.
# What it does NOT see: the kernel's cost of delivering the ticks' signals
# and of the extra context switches, and cache effects on the program
# (the wall-time benches, bench_sampler.rb, see those when they are large).
# A plain run is made in every round beside the profiled ones, so the
# paired wall and CPU ratios are printed too, as the noise floor to read
# the accounted shares against. So is "tick": bench/yardstick's
# counters-only hook with its bare 1 kHz ticker thread, whose CPU time is
# what any thread woken 1,000 times a second costs on this machine; the
# last column charges the sampler's worker only what it costs beyond it.
#
#   ruby -I lib -I <ext build dir> bench/bench_cost_accounting.rb [--runs 7] [--workload a|b|all]
#        [--modes counters,wall,cpu] [--pin CPU]
require "json"
require "rbconfig"
require_relative "yardstick/build"
require "tmpdir"
require_relative "stats"

module BenchCostAccounting
  WORKLOADS = {
    "a" => ["cpu_threads", "four CPU-bound threads", [120]],
    "b" => ["gvl_switch", "eight threads, tiny blocking pipe IO", []]
  }.freeze
  START = {
    "counters" => { mode: :counters },
    "wall" => { frequency: 1000, mode: :wall },
    "cpu" => { frequency: 1000, mode: :cpu }
  }.freeze
  WORKER_NAME = "rperf-sampler"
  TICKER_NAME = "yardstick-tick" # bench/yardstick's ticker thread

  module_function

  def process_cpu_ns = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID, :nanosecond)
  def monotonic_ns = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)

  # The time on a CPU so far of the threads named name (the sampler's
  # worker, or the yardstick's ticker), 0 when there is none.
  def thread_cpu_ns(name)
    Dir.glob("/proc/self/task/*").sum do |task|
      next 0 unless File.read(File.join(task, "comm")).strip == name

      File.read(File.join(task, "schedstat")).split.first.to_i
    rescue Errno::ENOENT
      0
    end
  end

  def child(workload, mode)
    require_relative "workloads/cpu_threads"
    require_relative "workloads/gvl_switch"
    method, _, args = WORKLOADS.fetch(workload)
    BenchWorkloads.public_send(method, 2)
    if mode == "tick"
      require "yardstick_hook"
      YardstickHook.start
      YardstickHook.start_ticker(1000)
    elsif mode != "plain"
      require "rperf"
      Rperf.start(**START.fetch(mode))
    end
    worker = mode == "tick" ? TICKER_NAME : WORKER_NAME
    w0 = thread_cpu_ns(worker)
    c0 = process_cpu_ns
    t0 = monotonic_ns
    BenchWorkloads.public_send(method, *args)
    elapsed = monotonic_ns - t0
    cpu = process_cpu_ns - c0
    worker_ns = thread_cpu_ns(worker) - w0
    stats = START.key?(mode) ? Rperf.stop.stats : {}
    puts JSON.generate({ "elapsed_ns" => elapsed, "cpu_ns" => cpu, "worker_ns" => worker_ns,
                         "hook_ns" => stats.fetch("hook_time_ns", 0), "sampling_ns" => stats.fetch("sampling_time_ns", 0),
                         "hook_events" => stats.fetch("hook_events", 0), "samples" => stats.fetch("sampling_count", 0) })
  end

  def run_child(workload, mode, pin)
    includes = $LOAD_PATH.select { |d| File.exist?(File.join(d, "rperf.rb")) || Dir.exist?(File.join(d, "rperf")) }
                         .map { |d| File.expand_path(d) }
    includes << @yardstick_dir
    includes = includes.flat_map { |d| ["-I", d] }
    prefix = pin ? ["taskset", "-c", pin] : []
    out = IO.popen([*prefix, RbConfig.ruby, *includes, __FILE__, "--child", workload, mode], &:read)
    abort "bench_cost_accounting: child #{workload}/#{mode} failed" unless $?.success?
    JSON.parse(out.lines.last)
  end

  def pct(value) = format("%+.2f %%", value * 100)
  def share(value) = format("%.2f %%", value * 100)

  def report(workload, modes, rounds)
    plain = rounds.map { |r| r["plain"] }
    puts "workload (#{workload}): #{WORKLOADS[workload][1]}, #{rounds.size} rounds, plain wall median " \
         "#{(BenchStats.median(plain.map { |r| r["elapsed_ns"] }) / 1e6).round} ms (#{(plain.map { |r| r["elapsed_ns"] }.minmax.map { |v| (v / 1e6).round }).join("..")})"
    floor = BenchStats.median(rounds.map { |r| r["tick"]["worker_ns"].to_f / r["tick"]["cpu_ns"] })
    puts "| mode | hooks | samples | worker | accounted, all | beyond the 1 kHz tick floor | paired wall | paired CPU | GVL events | samples per run |"
    puts "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    (["tick"] + modes).each do |mode|
      runs = rounds.map { |r| r[mode] }
      part = ->(key) { BenchStats.median(runs.map { |r| r[key].to_f / r["cpu_ns"] }) }
      all = BenchStats.median(runs.map { |r| (r["hook_ns"] + r["sampling_ns"] + r["worker_ns"]).to_f / r["cpu_ns"] })
      beyond = mode == "counters" || mode == "tick" ? all : all - floor
      wall = BenchStats.median(rounds.map { |r| r[mode]["elapsed_ns"].to_f / r["plain"]["elapsed_ns"] - 1 })
      cpu = BenchStats.median(rounds.map { |r| r[mode]["cpu_ns"].to_f / r["plain"]["cpu_ns"] - 1 })
      puts "| #{mode} | #{share(part.("hook_ns"))} | #{share(part.("sampling_ns"))} | #{share(part.("worker_ns"))} | " \
           "#{share(all)} | #{mode == "tick" ? "(the floor)" : pct(beyond)} | #{pct(wall)} | #{pct(cpu)} | #{BenchStats.median(runs.map { |r| r["hook_events"] }).round} | " \
           "#{BenchStats.median(runs.map { |r| r["samples"] }).round} |"
    end
    puts
  end

  def main(argv)
    runs = 7
    selected = %w[a]
    modes = START.keys
    pin = nil
    until argv.empty?
      case (arg = argv.shift)
      when "--runs" then runs = Integer(argv.shift)
      when "--workload"
        value = argv.shift
        selected = value == "all" ? WORKLOADS.keys : [value]
        abort "bench_cost_accounting: --workload must be a, b or all" unless (selected - WORKLOADS.keys).empty?
      when "--modes"
        modes = argv.shift.to_s.split(",")
        abort "bench_cost_accounting: --modes takes #{START.keys.join(", ")}" if modes.empty? || !(modes - START.keys).empty?
      when "--pin" then pin = argv.shift
      else abort "bench_cost_accounting: unknown argument #{arg.inspect} (see the file's header)"
      end
    end
    abort "bench_cost_accounting: --runs must be at least 1" if runs < 1
    @yardstick_dir = YardstickBuild.build("bench_cost_accounting")
    selected.each do |workload|
      rounds = Array.new(runs) do |i|
        $stderr.print "\r(#{workload}) round #{i + 1}/#{runs}"
        (%w[plain tick] + modes).to_h { |mode| [mode, run_child(workload, mode, pin)] }
      end
      $stderr.puts
      report(workload, modes, rounds)
    end
  end
end

if ARGV.first == "--child"
  BenchCostAccounting.child(ARGV[1], ARGV[2])
else
  BenchCostAccounting.main(ARGV)
end

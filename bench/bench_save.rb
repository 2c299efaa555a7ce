# frozen_string_literal: true

# rperf's own flow, timed where its users pay: Rperf.start(mode: :cpu), the
# pipe ping-pong workload (b), Rperf.stop, Rperf.save("profile.pb.gz") —
# the time and the peak memory of stop and of save, and the process's peak
# RSS over plain Ruby, beside rperf 0.9 doing the same in the same rounds
# (--peers DIR: a build of ../shared/peers/build.sh). Each variant runs in
# a child process of its own, rounds interleaved; medians are printed.
#
#   ruby -Ilib -Ibuild/ext bench/bench_save.rb [--round-trips N] [--rounds N] [--peers DIR]
require "optparse"
require "json"
require "rbconfig"
require "tmpdir"
require_relative "stats"

opts = { round_trips: 250_000, rounds: 5, peers: nil }
OptionParser.new do |o|
  o.on("--round-trips N", Integer) { |v| opts[:round_trips] = v }
  o.on("--rounds N", Integer) { |v| opts[:rounds] = v }
  o.on("--peers DIR") { |v| opts[:peers] = v }
end.parse!

WORKLOADS = File.expand_path("workloads", __dir__)
PROJECT = $LOAD_PATH.select { |d| File.exist?(File.join(d, "rperf.rb")) || File.exist?(File.join(d, "rperf_ext.so")) }
                    .map { |d| File.expand_path(d) }

CHILD = <<~'RUBY'
  require "json"
  require File.join(ENV["BENCH_WORKLOADS"], "gvl_switch")
  mib = ->(key) { File.read("/proc/self/status")[/^#{key}:\s+(\d+)/, 1].to_i / 1024.0 }
  clock = -> { Process.clock_gettime(Process::CLOCK_MONOTONIC) }
  variant = ENV["BENCH_VARIANT"]
  n = Integer(ENV["BENCH_ROUND_TRIPS"])
  out = File.join(ENV["BENCH_DIR"], "profile.pb.gz")
  BenchWorkloads.gvl_switch(2_000) # warm-up
  result = { "variant" => variant }
  if variant == "plain"
    BenchWorkloads.gvl_switch(n)
  else
    require "rperf"
    if variant == "rperf09"
      Rperf.start(mode: :cpu, frequency: 1000, inherit: false)
    else
      Rperf.start(mode: :cpu, frequency: 1000)
    end
    BenchWorkloads.gvl_switch(n)
    rss_run = mib.("VmHWM")
    t = clock.()
    data = Rperf.stop
    result["stop_ms"] = (clock.() - t) * 1000
    File.write("/proc/self/clear_refs", "5")
    before = mib.("VmRSS")
    t = clock.()
    Rperf.save(out, data)
    result["save_ms"] = (clock.() - t) * 1000
    result["save_mib"] = mib.("VmHWM") - before
    result["bytes"] = File.size(out)
    result["run_hwm_mib"] = rss_run
  end
  result["hwm_mib"] = mib.("VmHWM")
  puts JSON.generate(result)
RUBY

def run_child(variant, opts, dir)
  includes = variant == "rperf09" ? [File.join(opts[:peers], "rperf09", "lib")] : PROJECT
  env = { "BENCH_VARIANT" => variant, "BENCH_ROUND_TRIPS" => opts[:round_trips].to_s, "BENCH_DIR" => dir,
          "BENCH_WORKLOADS" => WORKLOADS }
  out = IO.popen(env, [RbConfig.ruby, *includes.flat_map { |d| ["-I", d] }, "-e", CHILD], &:read)
  raise "#{variant} failed" unless $?.success?

  JSON.parse(out.lines.last)
end


variants = %w[plain rperf-gvl]
variants << "rperf09" if opts[:peers]
rows = Hash.new { |h, k| h[k] = [] }
Dir.mktmpdir("rperf-bench-save") do |dir|
  opts[:rounds].times do |round|
    (round.even? ? variants : variants.reverse).each { |v| rows[v] << run_child(v, opts, dir) }
  end
end
plain_hwm = BenchStats.median(rows["plain"].map { |r| r["hwm_mib"] })
printf "(b) %d round trips, cpu mode 1 kHz, %d rounds (medians); plain Ruby peak RSS %.1f MiB\n",
       opts[:round_trips], opts[:rounds], plain_hwm
variants.drop(1).each do |v|
  r = rows[v]
  printf "%-10s stop %6.1f ms   save %6.1f ms, +%.1f MiB for the save, %d bytes   peak RSS over plain +%.1f MiB\n",
         v, BenchStats.median(r.map { |x| x["stop_ms"] }), BenchStats.median(r.map { |x| x["save_ms"] }), BenchStats.median(r.map { |x| x["save_mib"] }),
         BenchStats.median(r.map { |x| x["bytes"] }), BenchStats.median(r.map { |x| x["hwm_mib"] }) - plain_hwm
end

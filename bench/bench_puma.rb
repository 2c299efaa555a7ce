# frozen_string_literal: true

# What the log lines cost a real server: Debian's Puma 5.6 (single mode, 16
# threads) serving test/servers/app.ru under wrk, plain against the same
# app with Rperf::Rack::Middleware and the profiler in counters mode, in
# rounds of ABBA order so both see the same machine. Per variant and round:
# requests per second, the server's CPU per request (utime + stime of the
# Puma process from /proc over wrk's run, divided by wrk's requests), its
# threads' context switches per request (voluntary + involuntary) and
# wrk's p99 latency; then the median of the paired ratios over plain.
#
#   ruby -Ilib -Ibuild/ext bench/bench_puma.rb [--rounds N] [--seconds S] [--path /hello|/users|mix] [--output null|file]
#        [--base LIB,EXT] [--pin] [--labeller] [--pace MS] [--thread-cpu]
#
# --path /users asks for /users/ID/posts/N with a new ID each request (a
# wrk script), as a route with ids is asked for in production: the app
# answers it as it answers /hello.
# --path mix runs /cpu, /io and /hello together (three wrk at once); the
# middleware's lines go to /dev/null or to a file (--output file). Needs
# bin/setup-servers' components (test/servers/components.rb says which).
# --base LIB,EXT adds a third variant in the same rounds: the middleware of
# another build (its lib/ and built ext/ directories), to compare two builds
# side by side (rounds then run A B C C B A).
# --labeller gives the middleware a labeller that returns a new Hash each
# request (the route's first segment), as an app that labels by its router.
# --pace MS makes each of wrk's connections wait MS milliseconds before its
# next request (wrk's delay()), so the load stays below what the server can
# take: both variants then serve about the same requests per second, and the
# CPU per request is the log's own, not the throughput it costs (at full
# load a GVL-bound server burns the same CPU per second whatever it serves).
# --pin runs Puma on CPU 1 and wrk on CPU 0 (taskset): the shape of a
# one-CPU container, and the CPU per request no longer moves with where the
# scheduler put each thread.
# --thread-cpu wraps every variant's app in a probe that reads the request
# thread's own CPU clock: the middleware's share (its call minus the app's)
# and the after-reply hooks' share, per request. The server's CPU then
# includes the probe's clock reads, in every variant alike; the paired
# difference is the log's own work on the request thread, which the
# server's scheduling does not blur.
require "etc"
require "optparse"
require "json"
require "tmpdir"
require "rbconfig"
require_relative "../test/servers/components"
require_relative "../test/servers/server_process"
require_relative "stats"

opts = { rounds: 6, seconds: 5, path: "/hello", output: "null", connections: 16 }
OptionParser.new do |o|
  o.on("--rounds N", Integer) { |v| opts[:rounds] = v }
  o.on("--seconds S", Integer) { |v| opts[:seconds] = v }
  o.on("--path P", %w[/hello /users mix]) { |v| opts[:path] = v }
  o.on("--output O", %w[null file]) { |v| opts[:output] = v }
  o.on("--connections N", Integer) { |v| opts[:connections] = v }
  o.on("--base LIB,EXT", Array) { |v| opts[:base] = v.map { |d| File.expand_path(d) } }
  o.on("--pin") { opts[:pin] = true }
  o.on("--labeller") { opts[:labeller] = true }
  o.on("--pace MS", Integer) { |v| opts[:pace] = v }
  o.on("--thread-cpu") { opts[:thread_cpu] = true }
end.parse!
abort "bench_puma: --pace needs a path of one kind (/hello or /users)" if opts[:pace] && opts[:path] == "mix"
abort "bench_puma: --pace must be at least 1 (ms)" if opts[:pace] && opts[:pace] < 1
abort "bench_puma: #{Servers::Components.missing}" if Servers::Components.missing

APP_PLAIN = <<~RUBY
  require "json"
  def burn(seconds)
    start = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID)
    x = 0
    x += 1 while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - start < seconds
  end
  run(lambda do |env|
    case env["PATH_INFO"]
    when "/cpu" then burn(0.002)
    when "/io" then sleep 0.005
    end
    [200, { "content-type" => "text/plain" }, ["ok\\n"]]
  end)
RUBY
MIDDLEWARE = <<~RUBY
  require "rperf"
  require "rperf/rack"
  Rperf.start(mode: :counters) unless ENV["BENCH_NO_PROFILER"]
  out = ENV["BENCH_LOG"] ? File.open(ENV["BENCH_LOG"], "a") : File.open(File::NULL, "w")
  labeller = ->(env) { { endpoint: "GET \#{env["PATH_INFO"][%r{\\A/\\w*}]}" } } if ENV["BENCH_LABELLER"]
  use Rperf::Rack::Middleware, output: out, labeller: labeller unless ENV["BENCH_NO_LOG"]
RUBY

# The --thread-cpu probe, first in every variant's rackup: an outer
# middleware around the whole stack and an inner one around the app; an
# after-reply hook before and after the others. At exit it writes
# "call_ns hook_ns requests" to $BENCH_PROBE.
PROBE = <<~'RUBY'
  module BenchProbe
    @call = @hook = @n = 0
    class << self
      attr_accessor :call, :hook, :n
    end
    def self.now = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID, :nanosecond)
    Outer = Struct.new(:app) do
      def call(env)
        hooks = env["rack.after_reply"]
        if hooks.is_a?(Array)
          hooks << -> { Thread.current[:bench_hook] = BenchProbe.now }
        end
        t0 = BenchProbe.now
        response = app.call(env)
        BenchProbe.call += BenchProbe.now - t0 - Thread.current[:bench_app]
        BenchProbe.n += 1
        if hooks.is_a?(Array)
          hooks << -> { BenchProbe.hook += BenchProbe.now - Thread.current[:bench_hook] }
        end
        response
      end
    end
    Inner = Struct.new(:app) do
      def call(env)
        t0 = BenchProbe.now
        app.call(env)
      ensure
        Thread.current[:bench_app] = BenchProbe.now - t0
      end
    end
    at_exit { File.write(ENV["BENCH_PROBE"], "#{call} #{hook} #{n}") }
  end
  use BenchProbe::Outer
RUBY
PROBE_INNER = "use BenchProbe::Inner\n"

def cpu_ticks(pid)
  fields = File.read("/proc/#{pid}/stat").split(") ").last.split
  Integer(fields[11]) + Integer(fields[12]) # utime + stime, clock ticks
end

# Context switches of all the process's threads (voluntary + involuntary).
def switches(pid)
  Dir.glob("/proc/#{pid}/task/*/status").sum do |f|
    File.read(f).scan(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)/).sum { |(n)| Integer(n) }
  rescue Errno::ENOENT, Errno::ESRCH
    0
  end
end

def pinned(argv, cpu, opts) = opts[:pin] ? ["taskset", "-c", cpu.to_s, *argv] : argv

# wrk's script for --path /users: a new id each request.
NEW_IDS = <<~LUA
  local n = 0
  request = function()
    n = n + 1
    return wrk.format(nil, "/users/" .. math.random(1, 1000000000) .. "/posts/" .. n)
  end
LUA

# wrk's script for --pace: the path's requests, each connection waiting
# between them.
def paced_script(path, ms)
  request = path == "/users" ? NEW_IDS : ""
  "#{request}delay = function() return #{Integer(ms)} end\n"
end

def wrk(port, path, connections, seconds, opts, paced: true)
  script = if opts[:pace] && paced then ["-s", opts[:paced]]
           elsif path == "/users" then ["-s", opts[:new_ids]]
           else []
           end
  out = IO.popen(pinned(["wrk", "-t2", "-c#{connections}", "-d#{seconds}s", "--latency", *script,
                         "http://127.0.0.1:#{port}#{path}"], 0, opts), &:read)
  p99 = out[/99%\s+([\d.]+)(us|ms|s)/] && Float(Regexp.last_match(1)) * { "us" => 1e-3, "ms" => 1, "s" => 1e3 }[Regexp.last_match(2)]
  { requests: Integer(out[/(\d+) requests in/, 1]), p99_ms: p99 }
end

def run_variant(name, opts, dir)
  ru = File.join(dir, "#{name}.ru")
  prelude = case name
            when "middleware" then MIDDLEWARE
            when "base" then "$LOAD_PATH.unshift(*#{opts[:base].inspect})\n#{MIDDLEWARE}"
            else ""
            end
  prelude = PROBE + prelude + PROBE_INNER if opts[:thread_cpu]
  probe = File.join(dir, "#{name}.probe")
  File.delete(probe) if File.exist?(probe)
  File.write(ru, prelude + APP_PLAIN)
  port = Servers::ServerProcess.free_port
  env = Servers::Components.env
  env = env.merge("BENCH_LOG" => File.join(dir, "lines.log")) if opts[:output] == "file"
  env = env.merge("BENCH_LABELLER" => "1") if opts[:labeller]
  env = env.merge("BENCH_PROBE" => probe) if opts[:thread_cpu]
  argv = pinned([RbConfig.ruby, *Servers::Components.ruby_args, "-e", 'require "puma/cli"; Puma::CLI.new(ARGV).run', "--",
          "--no-config", "-b", "tcp://127.0.0.1:#{port}", "-t", "16:16", "-e", "production", ru], 1, opts)
  server = Servers::ServerProcess.new(argv, env: env, log: File.join(dir, "#{name}.log"), port: port).wait_ready
  wrk(port, "/hello", 4, 1, opts, paced: false) # warm-up
  ticks = cpu_ticks(server.pid)
  sw = switches(server.pid)
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  paths = opts[:path] == "mix" ? %w[/cpu /io /hello] : [opts[:path]]
  results = paths.map { |p| Thread.new { wrk(port, p, opts[:connections], opts[:seconds], opts) } }.map(&:value)
  elapsed = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
  cpu_s = (cpu_ticks(server.pid) - ticks).fdiv(Etc.sysconf(Etc::SC_CLK_TCK))
  sw = switches(server.pid) - sw
  requests = results.sum { |r| r[:requests] }
  { rps: requests / elapsed, cpu_us: cpu_s * 1e6 / requests, switches: sw.fdiv(requests), p99_ms: results.map { |r| r[:p99_ms].to_f }.max,
    by_path: paths.zip(results).to_h { |p, r| [p, r[:requests] / elapsed] } }
ensure
  server&.stop
end

# The probe's figures once the server has exited: thread CPU in the
# middleware's call and in the after-reply hooks, in us per request.
def probe_figures(dir, name)
  call, hook, n = File.read(File.join(dir, "#{name}.probe")).split.map { |v| Integer(v) }
  abort "bench_puma: the --thread-cpu probe of #{name} saw no request" if n.zero?
  { call_us: call / 1e3 / n, hook_us: hook / 1e3 / n }
end


rows = Hash.new { |h, k| h[k] = [] }
variants = opts[:base] ? %w[plain middleware base] : %w[plain middleware]
Dir.mktmpdir("rperf-bench-puma") do |dir|
  opts[:new_ids] = File.join(dir, "new_ids.lua")
  File.write(opts[:new_ids], NEW_IDS)
  if opts[:pace]
    opts[:paced] = File.join(dir, "paced.lua")
    File.write(opts[:paced], paced_script(opts[:path], opts[:pace]))
  end
  opts[:rounds].times do |round|
    order = round.even? ? variants : variants.rotate
    order += order.reverse
    got = order.map do |v|
      r = run_variant(v, opts, dir)
      [v, opts[:thread_cpu] ? r.merge(probe_figures(dir, v)) : r]
    end
    variants.each do |v|
      mine = got.select { |name, _| name == v }.map(&:last)
      rows[v] << { rps: mine.sum { |r| r[:rps] } / 2, cpu_us: mine.sum { |r| r[:cpu_us] } / 2,
                   switches: mine.sum { |r| r[:switches] } / 2,
                   p99_ms: mine.sum { |r| r[:p99_ms] } / 2,
                   by_path: mine[0][:by_path].keys.to_h { |p| [p, mine.sum { |r| r[:by_path][p] } / 2] } }
      rows[v].last.merge!(%i[call_us hook_us].to_h { |k| [k, mine.sum { |r| r[k] } / 2] }) if opts[:thread_cpu]
    end
    printf "round %d:%s\n", round + 1, variants.map { |v|
      r = rows[v].last
      format(" %s %.0f req/s %.1f us CPU %.2f sw p99 %.2f ms", v, r[:rps], r[:cpu_us], r[:switches], r[:p99_ms]) +
        (opts[:thread_cpu] ? format(" thread %.2f + %.2f us", r[:call_us], r[:hook_us]) : "")
    }.join(" |")
  end
end
(variants - ["plain"]).each do |v|
  pairs = rows["plain"].zip(rows[v])
  throughput = BenchStats.median(pairs.map { |p, m| m[:rps] / p[:rps] })
  cpu = BenchStats.median(pairs.map { |p, m| m[:cpu_us] - p[:cpu_us] })
  p99 = BenchStats.median(pairs.map { |p, m| m[:p99_ms] / p[:p99_ms] })
  sw = BenchStats.median(pairs.map { |p, m| m[:switches] - p[:switches] })
  printf "%s: path %s, output %s, %d rounds%s: throughput x%.3f (%+.1f %%), server CPU %+.1f us per request, %+.2f context switches per request, p99 x%.2f\n",
         v, opts[:path], opts[:output], opts[:rounds],
         (opts[:pin] ? ", pinned" : "") + (opts[:pace] ? ", each connection pausing #{opts[:pace]} ms" : ""), throughput, (throughput - 1) * 100, cpu, sw, p99
  if opts[:thread_cpu]
    call = BenchStats.median(pairs.map { |p, m| m[:call_us] - p[:call_us] })
    hook = BenchStats.median(pairs.map { |p, m| m[:hook_us] - p[:hook_us] })
    both = BenchStats.median(pairs.map { |p, m| m[:call_us] + m[:hook_us] - p[:call_us] - p[:hook_us] })
    printf "  request thread's own CPU, paired: %+.2f us per request (its call %+.2f, after-reply hooks %+.2f)\n",
           both, call, hook
  end
  next unless opts[:path] == "mix"

  # The mix's total is mostly /hello: each path's own throughput too.
  puts "  by path: " + pairs[0][0][:by_path].keys.map { |path|
    format("%s x%.3f", path, BenchStats.median(pairs.map { |p, m| m[:by_path][path] / p[:by_path][path] }))
  }.join(", ")
end
if opts[:base]
  pairs = rows["middleware"].zip(rows["base"])
  printf "middleware - base, paired per round: server CPU %+.1f us per request, throughput x%.3f\n",
         BenchStats.median(pairs.map { |m, b| m[:cpu_us] - b[:cpu_us] }),
         BenchStats.median(pairs.map { |m, b| m[:rps] / b[:rps] })
  if opts[:thread_cpu]
    diffs = pairs.map { |m, b| m[:call_us] + m[:hook_us] - b[:call_us] - b[:hook_us] }
    printf "  request thread's own CPU %+.2f us per request, lower in %d of %d rounds\n",
           BenchStats.median(diffs), diffs.count(&:negative?), diffs.size
  end
end

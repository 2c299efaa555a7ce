# frozen_string_literal: true

# One process's CPU per request of Rperf::Rack::Middleware in a loop, the
# way a server spends it: the app called through the middleware with
# rack.after_reply run after it, the log's writer thread included (lines
# to /dev/null; max_queued large enough that no line is dropped, so a
# faster build does not look faster by dropping more). Prints the cost over
# the bare app and what GC did meanwhile (GC time, minor and major
# collections, objects allocated per request). To compare two builds, run
# it under each in turn, several times:
#
#   ruby -Ilib -Ibuild/ext bench/bench_request_loop.rb [requests] [--ids] [--labeller]
#
# The requests cycle over 1,000 paths (/users/0 .. /users/999); --ids gives
# each request a path with an id not seen before (/users/N/posts/M), as a
# route with ids gets in production. The bare app gets the same paths.
# --labeller labels requests by a labeller that returns a new Hash each
# time (the router's pattern, as docs/logging.md suggests).
require "rperf"
require "rperf/rack"

IDS = ARGV.delete("--ids")
LABELLER = ARGV.delete("--labeller") && ->(_env) { { endpoint: "GET /users/:id" } }
N = Integer(ARGV[0] || 100_000)
APP = ->(_env) { [200, { "content-type" => "text/plain" }, ["ok"]] }
NULL = File.open(File::NULL, "w")

Rperf.start(mode: :counters)
mw = Rperf::Rack::Middleware.new(APP, output: NULL, max_queued: 1_000_000, labeller: LABELLER)
# Each request gets an env of its own, as in a server (one kept would hold
# its unit); the paths are made beforehand.
paths = Array.new(IDS ? N : 1000) { |i| IDS ? "/users/#{1_000_000 + i}/posts/#{i * 7}" : "/users/#{i}" }

def cpu = Process.clock_gettime(Process::CLOCK_PROCESS_CPUTIME_ID)

# The server's part: the request, then the hooks the middleware added.
def serve(app, path)
  hooks = []
  app.call({ "REQUEST_METHOD" => "GET", "PATH_INFO" => path, "SCRIPT_NAME" => "", "rack.after_reply" => hooks })
  hooks.each(&:call)
end

gc0 = GC.stat
t0 = cpu
N.times { |i| serve(mw, paths[i % paths.size]) }
t1 = cpu
gc1 = GC.stat
N.times { |i| serve(APP, paths[i % paths.size]) }
t2 = cpu

printf("middleware %.2f us, bare app %.2f us: cost %.2f us per request, %d lines\n",
       (t1 - t0) * 1e6 / N, (t2 - t1) * 1e6 / N, ((t1 - t0) - (t2 - t1)) * 1e6 / N, mw.log.stats[:lines])
printf("GC %.2f us per request, %d minor and %d major, %.1f objects per request\n",
       (gc1[:time] - gc0[:time]) * 1e3 / N, gc1[:minor_gc_count] - gc0[:minor_gc_count],
       gc1[:major_gc_count] - gc0[:major_gc_count],
       (gc1[:total_allocated_objects] - gc0[:total_allocated_objects]).fdiv(N))

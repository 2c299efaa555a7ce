# frozen_string_literal: true

# An IO-bound worker pool: each task fetches a payload from a slow "server"
# (a thread that answers over a socket pair after a delay), then parses it.
# Almost all the time is blocked on IO; the GVL only matters for the short
# parse. Run with a small and a large pool to see the trade-off: the large
# pool finishes sooner but its parses wait for each other on the GVL.
#
#   ruby -Ilib -Ibuild/ext examples/io_pool.rb [--tasks N] [--format json]
#
# Every task writes one line (Rperf.log_contention), and each pool size
# ends with one whole-run line per label set.
require "json"
require "optparse"
require "socket"
require "rperf"
require "rperf/contention_log"

opts = { tasks: 48, format: "logfmt" }
OptionParser.new do |o|
  o.on("--tasks N", Integer) { |v| opts[:tasks] = v }
  o.on("--format F", %w[logfmt json]) { |v| opts[:format] = v }
end.parse!(ARGV)

# A pretend remote service (threads of this process, labelled role=remote
# so their own work is told apart in the whole-run lines): answers each request line after `delay` seconds.
def serve(sock, delay)
  Thread.new do
    Rperf.label(role: "remote") do
      while (req = sock.gets)
        sleep delay
        rows = Array.new(200) { |i| { "id" => i, "name" => "row-#{req.strip}-#{i}", "score" => i * 0.5 } }
        sock.write(JSON.generate(rows), "\n")
      end
    end
  rescue IOError
    nil
  end
end

def fetch_and_parse(id)
  client, server = UNIXSocket.pair
  remote = serve(server, 0.02)
  client.puts(id.to_s)
  rows = JSON.parse(client.gets) # blocked, then a short parse holding the GVL
  rows.sum { |r| r["score"] }
ensure
  client&.close
  server&.close
  remote&.join
end

$stdout.sync = true
Rperf.start(mode: :wall, frequency: 100, defer: true)
begin
  [4, 32].each do |pool_size|
    log = Rperf::ContentionLog.new(output: $stdout, format: opts[:format])
    Rperf::ContentionLog.default = log
    log.start_interval(every: 60)
    tasks = Queue.new
    opts[:tasks].times { |i| tasks << i }
    pool_size.times { tasks << nil }
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    pool = pool_size.times.map do
      Thread.new do
        while (id = tasks.pop)
          Rperf.log_contention(kind: "task", pool: pool_size.to_s) { fetch_and_parse(id) }
        end
      end
    end
    pool.each(&:join)
    wall = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    puts "# pool of #{pool_size}: #{opts[:tasks]} tasks in #{format('%.3f', wall)} s; whole run per label set:"
    log.stop_interval
    puts
  end
ensure
  Rperf.stop if Rperf.running?
end

# frozen_string_literal: true

# A small in-process job runner in the style of Sidekiq: a queue, a pool of
# worker threads, and a server middleware chain that calls
# `middleware.call(worker, job, queue) { worker.perform(*args) }`.
# Rperf::JobMiddleware is in the chain, so every job writes one contention
# line labelled by its class and queue; at the end one line per job class
# sums the whole run (the interval log's final flush).
#
#   ruby -Ilib -Ibuild/ext examples/job_runner.rb [--format json] [--workers N] [--jobs N]
#
# Jobs: ResizeImage (CPU), SendEmail (waits on a slow server: blocked),
# BuildReport (a long pure-Ruby loop that hogs the GVL), and FlakyImport,
# which fails now and then (its line carries error=...).
require "optparse"
require "rperf"
require "rperf/job_middleware"

module JobExample
  def self.fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)

  class ResizeImage
    def perform(size) = JobExample.fib(size)
  end

  class SendEmail
    def perform(_to) = sleep(0.03)
  end

  class BuildReport
    def perform = JobExample.fib(32)
  end

  class FlakyImport
    ImportError = Class.new(StandardError)

    def perform(n)
      JobExample.fib(16)
      raise ImportError, "row #{n} is malformed" if (n / 3).odd?
    end
  end

  # The runner: `jobs` are Sidekiq-like hashes {"class", "args", "queue", "jid"}.
  class Runner
    def initialize(middleware, workers:)
      @middleware = middleware
      @queue = Queue.new
      @failed = 0
      @lock = Mutex.new
      @threads = workers.times.map do |i|
        Thread.new do
          Thread.current.name = "job-worker-#{i}"
          while (job = @queue.pop)
            run(job)
          end
        end
      end
    end

    attr_reader :failed

    def push(job) = @queue << job

    def shutdown
      @threads.size.times { @queue << nil }
      @threads.each(&:join)
    end

    private

    def run(job)
      worker = JobExample.const_get(job["class"]).new
      chain(worker, job, job["queue"], @middleware.dup) { worker.perform(*job["args"]) }
    rescue StandardError
      @lock.synchronize { @failed += 1 } # a real runner would retry it
    end

    def chain(worker, job, queue, rest, &perform)
      return perform.call if rest.empty?

      rest.shift.call(worker, job, queue) { chain(worker, job, queue, rest, &perform) }
    end
  end

  def self.jobs(count)
    kinds = [["ResizeImage", "media", -> { [22] }], ["SendEmail", "mail", -> { ["user@example.com"] }],
             ["FlakyImport", "default", nil]]
    list = count.times.map do |i|
      klass, queue, args = kinds[i % kinds.size]
      { "class" => klass, "queue" => queue, "args" => args ? args.call : [i], "jid" => format("%08x", i) }
    end
    list.insert(count / 4, { "class" => "BuildReport", "queue" => "reports", "args" => [], "jid" => "report-1" })
  end

  def self.main(argv)
    opts = { format: "logfmt", workers: 6, jobs: 24 }
    OptionParser.new do |o|
      o.banner = "usage: ruby -Ilib -Ibuild/ext examples/job_runner.rb [options]"
      o.on("--format F", %w[logfmt json]) { |v| opts[:format] = v }
      o.on("--workers N", Integer) { |v| opts[:workers] = v }
      o.on("--jobs N", Integer) { |v| opts[:jobs] = v }
    end.parse!(argv)

    $stdout.sync = true
    log = Rperf::ContentionLog.new(output: $stdout, format: opts[:format])
    Rperf.start(mode: :wall, frequency: 100, defer: true)
    # A long interval: the final flush at stop_interval gives whole-run lines per job class.
    log.start_interval(every: 60)
    runner = Runner.new([Rperf::JobMiddleware.new(log: log)], workers: opts[:workers])
    jobs(opts[:jobs]).each { |job| runner.push(job) }
    runner.shutdown
    puts "# whole run, one line per label set:"
    log.stop_interval
    puts "# #{runner.failed} jobs failed; log stats: #{log.stats}"
  ensure
    Rperf.stop if Rperf.running?
  end
end

JobExample.main(ARGV.dup) if $PROGRAM_NAME == __FILE__

# frozen_string_literal: true

# Rperf::Log::Writer delivers lines to a Rperf::Log::Sink from a thread of
# its own, so the thread that made a line (a request's) never waits for the
# log's IO. A line is queued as bytes in a Rperf::LineQueue: bounded
# (max_lines waiting, the rest dropped and counted), no lock, no object per
# line (queued Strings lived long enough to be promoted, and major
# collections grew with them). The writer sends what is queued in one batch
# every INTERVAL seconds, or as soon as BATCH lines wait. It is woken that
# rarely on purpose: woken for every line, it took the GVL from the request
# threads once per request, which cost a server more than the line itself.
# A forked child starts its own writer (the parent's lines stay the
# parent's); what is queued at exit is written before the process ends, for
# up to a second. It does NOT format lines (Rperf::ContentionLog does) and
# does not decide where they go (the Sink does).
module Rperf
  module Log
    class Writer
      DEFAULT_MAX_LINES = 10_000
      EXIT_FLUSH_SECONDS = 1.0
      INTERVAL = 0.05
      BATCH = 512
      # A writer with nothing to write for this long ends; the next line
      # starts another. An idle process keeps no thread of the log's.
      IDLE_EXIT = 1.0

      attr_reader :max_lines

      def initialize(sink, max_lines: DEFAULT_MAX_LINES)
        unless max_lines.is_a?(Integer) && max_lines >= 1
          raise ArgumentError, "max_lines: #{max_lines.inspect} is invalid; expected an Integer >= 1"
        end

        @sink = sink
        @max_lines = max_lines
        # The lines as bytes (ext/rperf/line_queue.h): request threads push
        # without this writer's mutex; the mutex orders the writer's own
        # start, wake-ups and end.
        @queue = Rperf::LineQueue.new(max_lines)
        @mutex = Mutex.new
        @wake = ConditionVariable.new
        @idle = ConditionVariable.new
        @busy = false
        @delivered = 0
        @pid = nil
      end

      # Queues one line. Returns false when it was dropped (the queue full).
      def push(line)
        queued(@queue.push(line, Process.pid))
      end

      # What a push into #queue returned (ContentionLog pushes a request's
      # line there from C): wakes or starts the writer as it needs. Returns
      # false when the line was dropped.
      def queued(result)
        if result.nil?
          false
        elsif result == BATCH
          @mutex.synchronize { @wake.signal }
          true
        elsif result == false
          @mutex.synchronize { start_writer_locked }
          true
        else
          true
        end
      end

      # The queue lines go to (Rperf::LineQueue).
      attr_reader :queue

      # Lines dropped because the queue was full, lines queued, and lines
      # delivered.
      def dropped = @queue.dropped
      def accepted = @queue.accepted
      def delivered = @mutex.synchronize { @delivered }

      # Waits until everything queued has been handed to the sink, at most
      # `timeout` seconds. Returns true when it was.
      def flush(timeout = EXIT_FLUSH_SECONDS)
        return true unless @pid == Process.pid

        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
        @mutex.synchronize do
          @wake.signal
          until @queue.size.zero? && !@busy
            left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
            return false if left <= 0

            @idle.wait(@mutex, [left, 0.01].min)
            @wake.signal
          end
        end
        true
      end

      private

      # Mutex held. Starts this process's writer unless it runs (a push
      # that raced another finds it started). In a fork child the parent's
      # writer does not run: the queue dropped the parent's lines already.
      def start_writer_locked
        return if @running && @pid == Process.pid

        @busy = false
        @pid = Process.pid
        @running = true
        @queue.serve(@pid)
        thread = Thread.new { run }
        thread.name = "rperf-log-writer"
        thread.report_on_exception = false
        return if @exit_hook

        @exit_hook = true
        writer = self
        at_exit { writer.flush }
      end

      def run
        idle_since = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        loop do
          batch = @mutex.synchronize do
            @wake.wait(@mutex, INTERVAL) if @queue.size < BATCH
            now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
            taken = @queue.take
            if taken
              idle_since = now
            elsif now - idle_since > IDLE_EXIT && @queue.retire
              @running = false # the next push starts a writer again
              @idle.broadcast
              return
            end
            @busy = !taken.nil?
            taken
          end
          next unless batch

          n = @sink.deliver_text(*batch)
          @mutex.synchronize do
            @delivered += n
            @busy = false
            @idle.broadcast
          end
        end
      end
    end
  end
end

# frozen_string_literal: true

# Rperf::Log::Writer delivers lines to a Rperf::Log::Sink from a thread of
# its own, so the thread that made a line (a request's) never waits for the
# log's IO: a line is queued (bounded: max_lines waiting, the rest dropped
# and counted) and the writer sends what is queued in one batch. A forked
# child starts its own writer (the parent's lines stay the parent's); what
# is queued at exit is written before the process ends, for up to a second.
# It does NOT format lines (Rperf::ContentionLog does) and does not decide
# where they go (the Sink does).
module Rperf
  module Log
    class Writer
      DEFAULT_MAX_LINES = 10_000
      EXIT_FLUSH_SECONDS = 1.0

      attr_reader :max_lines

      def initialize(sink, max_lines: DEFAULT_MAX_LINES)
        unless max_lines.is_a?(Integer) && max_lines >= 1
          raise ArgumentError, "max_lines: #{max_lines.inspect} is invalid; expected an Integer >= 1"
        end

        @sink = sink
        @max_lines = max_lines
        @mutex = Mutex.new
        @dropped = 0
        @delivered = 0
        @pid = nil
        @queue = nil
        @thread = nil
      end

      # Queues one line. Returns false when it was dropped (the queue full).
      def push(line)
        queue = current_queue
        if queue.size >= @max_lines
          @mutex.synchronize { @dropped += 1 }
          return false
        end
        queue << line
        true
      end

      # Lines dropped because the queue was full, and lines delivered.
      def dropped = @mutex.synchronize { @dropped }
      def delivered = @mutex.synchronize { @delivered }

      # Waits until the queue is empty and the writer idle, at most `timeout`
      # seconds. Returns true when everything queued was handed to the sink.
      def flush(timeout = EXIT_FLUSH_SECONDS)
        queue = @mutex.synchronize { @pid == Process.pid ? @queue : nil }
        return true unless queue

        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
        until queue.empty? && queue.num_waiting.positive?
          return false if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

          sleep 0.001
        end
        true
      end

      private

      def current_queue
        return @queue if @pid == Process.pid

        @mutex.synchronize do
          next @queue if @pid == Process.pid

          @queue = Thread::Queue.new
          @pid = Process.pid
          queue = @queue
          @thread = Thread.new { run(queue) }
          @thread.name = "rperf-log-writer"
          @thread.report_on_exception = false
          unless @exit_hook
            @exit_hook = true
            writer = self
            at_exit { writer.flush }
          end
          @queue
        end
      end

      def run(queue)
        batch = []
        loop do
          batch << queue.pop
          batch << queue.pop(true) until queue.empty? || batch.size >= 256
          n = @sink.deliver_batch(batch)
          @mutex.synchronize { @delivered += n }
          batch.clear
        end
      end
    end
  end
end

# frozen_string_literal: true

# Rperf::Log::Writer delivers lines to a Rperf::Log::Sink from a thread of
# its own, so the thread that made a line (a request's) never waits for the
# log's IO: a line is queued (bounded: max_lines waiting, the rest dropped
# and counted) and the writer sends what is queued in one batch every
# INTERVAL seconds, or as soon as BATCH lines wait. The writer is woken
# that rarely on purpose: woken for every line, it took the GVL from the
# request threads once per request, which cost a server more than the line
# itself. A forked child starts its own writer (the parent's lines stay the
# parent's); what is queued at exit is written before the process ends,
# for up to a second. It does NOT format lines (Rperf::ContentionLog does)
# and does not decide where they go (the Sink does).
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
        @mutex = Mutex.new
        @wake = ConditionVariable.new
        @idle = ConditionVariable.new
        @lines = []
        @busy = false
        @dropped = 0
        @delivered = 0
        @pid = nil
      end

      # Queues one line. Returns false when it was dropped (the queue full).
      def push(line)
        @mutex.synchronize do
          start_writer_locked unless @pid == Process.pid
          if @lines.size >= @max_lines
            @dropped += 1
            return false
          end
          @lines << line
          @wake.signal if @lines.size == BATCH
        end
        true
      end

      # Lines dropped because the queue was full, and lines delivered.
      def dropped = @mutex.synchronize { @dropped }
      def delivered = @mutex.synchronize { @delivered }

      # Waits until everything queued has been handed to the sink, at most
      # `timeout` seconds. Returns true when it was.
      def flush(timeout = EXIT_FLUSH_SECONDS)
        return true unless @pid == Process.pid

        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
        @mutex.synchronize do
          @wake.signal
          until @lines.empty? && !@busy
            left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
            return false if left <= 0

            @idle.wait(@mutex, [left, 0.01].min)
            @wake.signal
          end
        end
        true
      end

      private

      # Mutex held. In a forked child the parent's queue and writer are the
      # parent's; after an idle writer ended, the queue is empty.
      def start_writer_locked
        @lines = [] if @pid
        @busy = false
        @pid = Process.pid
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
            @wake.wait(@mutex, INTERVAL) if @lines.empty? || @lines.size < BATCH
            now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
            if !@lines.empty?
              idle_since = now
            elsif now - idle_since > IDLE_EXIT
              @pid = nil # the next push starts a writer again
              @idle.broadcast
              return
            end
            taken = @lines
            @lines = []
            @busy = !taken.empty?
            taken
          end
          next if batch.empty?

          n = @sink.deliver_batch(batch)
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

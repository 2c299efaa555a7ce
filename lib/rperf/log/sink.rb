# frozen_string_literal: true

# Rperf::Log::Sink delivers finished log lines to one destination: a Ruby
# Logger (anything with #add or #info), an IO (anything with #write), or a
# block. Delivery never raises into the caller: the first failure is
# reported once on $stderr, every failure is counted in #errors, and the
# program continues. It does NOT format lines (Rperf::Log::Format does).
module Rperf
  module Log
    class Sink
      LEVELS = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4, unknown: 5 }.freeze

      attr_reader :kind

      # output: a Logger, an IO, or nil with a block. level: the Logger
      # severity (:info by default).
      def initialize(output = nil, level: :info, &block)
        if block
          raise ArgumentError, "give either an output or a block, not both" if output

          @kind = :block
          @target = block
        elsif output.respond_to?(:add) && output.respond_to?(:info)
          @kind = :logger
          @target = output
          @severity = LEVELS.fetch(level.to_sym) do
            raise ArgumentError, "unknown log level #{level.inspect} (use #{LEVELS.keys.join(', ')})"
          end
        elsif output.respond_to?(:write)
          @kind = :io
          @target = output
          @io_mutex = Mutex.new
        else
          raise ArgumentError,
                "contention log output must be a Logger, an IO (responds to #write) or a block, got #{output.class}"
        end
        @errors = 0
        @reported = {}
        @state_mutex = Mutex.new
      end

      # Delivers one line (without newline). Returns true when delivered.
      def deliver(line)
        case @kind
        when :logger then @target.add(@severity, line)
        when :io then @io_mutex.synchronize { @target.write(line + "\n") }
        else @target.call(line)
        end
        true
      rescue StandardError => e
        failed(e)
        false
      end

      # Delivers `lines` lines, each ending in a newline, in one go where
      # the output allows: one write for an IO. Returns how many were
      # delivered.
      def deliver_text(text, lines)
        return text.each_line("\n", chomp: true).count { |line| deliver(line) } unless @kind == :io

        @io_mutex.synchronize { @target.write(text) }
        lines
      rescue StandardError => e
        failed(e)
        0
      end

      # Number of lines that could not be delivered.
      def errors
        @state_mutex.synchronize { @errors }
      end

      # Reports a failure that happened outside #deliver (formatting, reading
      # counters) the same way: the first of each kind (`what`) once on
      # stderr, every one counted.
      def failed(error, what: "writing to the log output")
        first = @state_mutex.synchronize do
          @errors += 1
          was = @reported[what]
          @reported[what] = true
          !was
        end
        return unless first

        begin
          $stderr.write("rperf: contention log: #{what} failed: #{error.class}: #{error.message} " \
                        "(further failures are counted, not printed; the program continues)\n")
        rescue StandardError
          nil # stderr itself is gone: nothing more can be done without raising
        end
      end
    end
  end
end

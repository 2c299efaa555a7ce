# frozen_string_literal: true

# Rperf::SamplerOptions — validates and normalises the sampler keywords of
# Rperf.start (frequency, mode, aggregate, signal, defer, output) into the
# integers the extension's start takes. mode: :counters runs no sampler, so
# the sampling keywords (frequency, aggregate, signal) are refused with it.
# It does NOT start anything; every error is an ArgumentError naming the
# keyword, the value and what is allowed.
module Rperf
  module SamplerOptions
    FREQUENCY_RANGE = (LIMITS[:frequency][:min]..LIMITS[:frequency][:max]).freeze
    # signal: nil picks the extension's default real-time signal (-1);
    # false means no signals at all (a condvar-driven worker, 0).
    SIGNAL_DEFAULT = -1
    SIGNAL_NONE = 0

    module_function

    # Returns { frequency:, mode:, mode_name:, aggregate:, signal:, defer:, output: }.
    # nil for frequency or signal means its default (frequency 0 and no
    # signal in counters mode, which aggregates nothing: only its default
    # aggregate: true passes there).
    def normalize(frequency: nil, mode: :cpu, aggregate: true, signal: nil, defer: false, output: nil)
      mode_number = check_mode(mode)
      if counters?(mode)
        check_unused_by_counters(frequency: frequency, aggregate: aggregate == true ? nil : aggregate, signal: signal)
        return { frequency: 0, mode: mode_number, mode_name: :counters, aggregate: true, signal: SIGNAL_NONE,
                 defer: check_boolean(:defer, defer), output: check_output(output) }
      end
      {
        frequency: check_frequency(frequency.nil? ? LIMITS[:frequency][:default] : frequency),
        mode: mode_number,
        mode_name: mode.to_sym,
        aggregate: check_boolean(:aggregate, aggregate),
        signal: check_signal(signal),
        defer: check_boolean(:defer, defer),
        output: check_output(output)
      }
    end

    # mode: :counters (or "counters")?
    def counters?(mode)
      mode.respond_to?(:to_sym) && mode.to_sym == :counters
    end

    # Keywords that only mean something to a sampler or a timeline, given
    # (non-nil) together with mode: :counters.
    def check_unused_by_counters(**given)
      given.each do |name, value|
        next if value.nil?

        raise ArgumentError, "#{name}: #{value.inspect} is invalid with mode: :counters " \
                             "(it records per-thread totals only: no sampler, timeline or wait graph); leave it out"
      end
    end

    def check_frequency(frequency)
      unless frequency.is_a?(Integer) && FREQUENCY_RANGE.cover?(frequency)
        raise ArgumentError, "frequency: #{frequency.inspect} is invalid; " \
                             "expected an Integer from #{FREQUENCY_RANGE.min} to #{FREQUENCY_RANGE.max} (Hz)"
      end
      frequency
    end

    def check_mode(mode)
      key = mode.respond_to?(:to_sym) ? mode.to_sym : nil
      Rperf::MODES.fetch(key) do
        names = Rperf::MODES.keys.map(&:inspect)
        raise ArgumentError, "mode: #{mode.inspect} is invalid; expected #{names[0..-2].join(', ')} or #{names[-1]}"
      end
    end

    def check_boolean(name, value)
      return value if value == true || value == false

      raise ArgumentError, "#{name}: #{value.inspect} is invalid; expected true or false"
    end

    def check_signal(signal)
      return SIGNAL_DEFAULT if signal.nil?
      return SIGNAL_NONE if signal == false

      unless signal.is_a?(Integer) && realtime_signals.cover?(signal)
        raise ArgumentError, "signal: #{signal.inspect} is invalid; expected nil (default), " \
                             "false (no signals) or a real-time signal number " \
                             "#{realtime_signals.min}..#{realtime_signals.max}"
      end
      signal
    end

    def check_output(output)
      # Refused here, not when stop writes it: the run would be lost.
      if output.is_a?(String) && output.include?("\0")
        raise ArgumentError, "output: #{output.inspect} is invalid; a path cannot contain a NUL byte"
      end
      return output if output.nil? || output.is_a?(String) || output.respond_to?(:write)

      raise ArgumentError, "output: #{output.inspect} is invalid; expected nil, a path String or an IO"
    end

    # Linux real-time signals as glibc exposes them (SIGRTMIN is 34 after the
    # two glibc keeps for itself); other platforms have no timer signal.
    def realtime_signals
      RUBY_PLATFORM.include?("linux") ? (34..64) : (1..0)
    end
  end
end

module Rperf
  # Block form of Rperf.start: `Rperf.start(**opts) { work }` profiles the
  # block and returns Rperf.stop's result. The profiler is stopped however
  # the block ends, and an exception from the block propagates unchanged
  # (the partial result is discarded). Without a block, start is unchanged.
  module StartWithBlock
    def start(**options, &block)
      return super(**options) unless block

      super(**options)
      begin
        yield
      rescue Exception # rubocop:disable Lint/RescueException -- re-raised unchanged
        stop if running?
        raise
      end
      stop
    end
  end
  singleton_class.prepend(StartWithBlock)
end

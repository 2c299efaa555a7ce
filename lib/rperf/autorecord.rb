# frozen_string_literal: true

# rperf/autorecord — profiles a whole program without changing it. Loaded
# through RUBYOPT (`-r rperf/autorecord`, as `rperf-gvl record` does): when
# RPERF_GVL_OUTPUT names a file, it starts Rperf.contention at load time
# and writes the report there when the program is over (Rperf::ProcessEnd:
# after every at_exit and after Ruby ended the other threads; gzip when the
# name ends in .gz). It does not choose where the report finally goes: `record`
# gives it a temporary file and moves it into place.
#
# Environment:
#   RPERF_GVL_OUTPUT     report path; nothing happens without it. Removed
#                        from ENV once read, so child processes that inherit
#                        RUBYOPT do not overwrite the parent's report.
#   RPERF_GVL_FREQUENCY  sampler frequency in Hz (Rperf::LIMITS[:frequency])
#   RPERF_GVL_MODE       sampler mode, wall (default) or cpu
#
# A program that starts a profile of its own (Rperf.start, Rperf.contention)
# wins: the whole-program profile stops at that moment, and what it recorded
# up to then is the report written at exit, with a note on stderr.
#
# Forked children do not write (the profiler is stopped in them). A bad
# setting stops the program with one `rperf-gvl:` line and exit status 2.
module Rperf
  module Autorecord
    # Signals that must not cut the report's write short: a signal the
    # program already ended on may arrive twice (sent to `record` and to its
    # process group); the program is done by then.
    QUIET_SIGNALS = %w[INT TERM HUP QUIT].freeze

    # Stops the whole-program profile when the program starts its own.
    module YieldToProgram
      def start(*args, **opts, &block)
        Autorecord.yield_to_program("Rperf.start")
        super
      end

      def contention(*args, **opts, &block)
        Autorecord.yield_to_program("Rperf.contention")
        super
      end
    end

    @session = nil
    @report = nil

    module_function

    def setting(name, default)
      value = ENV.fetch(name, "")
      value.empty? ? default : value
    end

    def frequency
      limit = Rperf::LIMITS[:frequency]
      raw = setting("RPERF_GVL_FREQUENCY", limit[:default].to_s)
      value = Integer(raw, 10, exception: false)
      return value if value && value.between?(limit[:min], limit[:max])

      abort "rperf-gvl: RPERF_GVL_FREQUENCY=#{raw.inspect} is invalid; " \
            "expected an integer from #{limit[:min]} to #{limit[:max]} (Hz)"
    end

    def mode
      raw = setting("RPERF_GVL_MODE", "wall")
      return raw.to_sym if %w[wall cpu].include?(raw)

      abort "rperf-gvl: RPERF_GVL_MODE=#{raw.inspect} is invalid; expected wall or cpu"
    end

    # Called before the program's own start: ends the whole-program profile
    # (keeping its report) so the program's profile can run.
    def yield_to_program(call)
      session = @session
      return unless session && @report.nil? && Process.pid == @pid && session.running?

      @report = session.stop
      @session = nil
      warn "rperf-gvl: the program called #{call}; the whole-program profile stopped here " \
           "and the report covers the run up to this call"
    end

    def start(output)
      require "rperf"
      require "rperf/process_end"
      @session = Rperf.contention(frequency: frequency, mode: mode)
      @pid = Process.pid
      Rperf.singleton_class.prepend(YieldToProgram)
      guard_signals
      ProcessEnd.register { finish(output) }
    rescue Rperf::Error, ArgumentError => e
      abort "rperf-gvl: cannot start the profiler: #{e.message}"
    end

    # The first of QUIET_SIGNALS ends the program as Ruby's own handler
    # would (Interrupt for INT, SignalException for the others); its copies
    # that follow are ignored from that moment, before the program has even
    # unwound, so none can cut the report short. A handler the program sets
    # later replaces this one, as it would replace Ruby's.
    def guard_signals
      QUIET_SIGNALS.each do |sig|
        trap(sig) do
          QUIET_SIGNALS.each { |quiet| trap(quiet, "IGNORE") }
          sig == "INT" ? raise(Interrupt) : raise(SignalException, sig)
        end
      end
    end

    def finish(output)
      QUIET_SIGNALS.each { |sig| trap(sig, "IGNORE") }
      report = @report || (@session&.running? ? @session.stop : nil)
      return unless report

      report.save(output, format: :json) # gzip when the name ends in .gz
    rescue StandardError => e
      warn "rperf-gvl: cannot write the report to #{output}: #{e.message}"
    end
  end
end

# abort exits with status 1; `record` documents 2 for bad settings.
begin
  output = ENV.delete("RPERF_GVL_OUTPUT")
  Rperf::Autorecord.start(output) if output && !output.empty?
rescue SystemExit => e
  exit!(2) unless e.success?
  raise
end

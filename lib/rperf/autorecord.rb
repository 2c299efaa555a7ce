# frozen_string_literal: true

# rperf/autorecord — profiles a whole program without changing it. Loaded
# through RUBYOPT (`-r rperf/autorecord`, as `rperf-gvl record` does): when
# RPERF_GVL_OUTPUT names a file, it starts Rperf.contention at load time
# and writes the report there when the process exits (gzip when the name
# ends in .gz).
#
# Environment:
#   RPERF_GVL_OUTPUT     report path; nothing happens without it. Removed
#                        from ENV once read, so child processes that inherit
#                        RUBYOPT do not overwrite the parent's report.
#   RPERF_GVL_FREQUENCY  sampler frequency in Hz (Rperf::LIMITS[:frequency])
#   RPERF_GVL_MODE       sampler mode, wall (default) or cpu
#
# Forked children do not write (the profiler is stopped in them). A bad
# setting stops the program with one `rperf-gvl:` line and exit status 2.
module Rperf
  module Autorecord
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

    def start(output)
      require "rperf"
      session = Rperf.contention(frequency: frequency, mode: mode)
      pid = Process.pid
      at_exit do
        next unless Process.pid == pid && session.running?

        begin
          session.stop.save(output, format: :json) # gzip when the name ends in .gz
        rescue StandardError => e
          warn "rperf-gvl: cannot write the report to #{output}: #{e.message}"
        end
      end
    rescue Rperf::Error, ArgumentError => e
      abort "rperf-gvl: cannot start the profiler: #{e.message}"
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

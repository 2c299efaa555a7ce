# frozen_string_literal: true

# Profiles the process that loads it, silently: loaded through RUBYOPT
# (-rprofile_at_load, with lib/, the extension and this folder on RUBYLIB),
# it starts Rperf in the mode RPERF_FIDELITY_MODE names (wall, with the
# timeline, or counters) and, when the program is over (Rperf::ProcessEnd,
# as `rperf-gvl record` does), writes the report to
# RPERF_FIDELITY_DIR/<mode>-<pid>.json. Child processes inherit RUBYOPT and
# are profiled the same way, each writing its own report.
#
# It never writes to stdout or stderr (Ruby's tests compare their children's
# output): a failure is written to RPERF_FIDELITY_DIR/error-<pid>.txt, which
# the fidelity suite reports. It does not check the report: the suite does.
module ProfileAtLoad
  module_function

  def note_error(dir, error)
    File.write(File.join(dir, "error-#{Process.pid}.txt"), "#{error.class}: #{error.message}\n")
  rescue StandardError
    nil
  end

  def start(mode, dir)
    require "rperf"
    require "rperf/process_end"
    Rperf.start(**(mode == "wall" ? { mode: :wall, timeline: true } : { mode: :counters }))
    Rperf::ProcessEnd.register do
      Rperf.stop&.save(File.join(dir, "#{mode}-#{Process.pid}.json"), format: :json)
    rescue Exception => e # rubocop:disable Lint/RescueException -- never print, whatever it is
      note_error(dir, e)
    end
  rescue Exception => e # rubocop:disable Lint/RescueException
    note_error(dir, e)
  end
end

mode = ENV.fetch("RPERF_FIDELITY_MODE", "")
dir = ENV.fetch("RPERF_FIDELITY_DIR", "")
ProfileAtLoad.start(mode, dir) if %w[wall counters].include?(mode) && !dir.empty?

# frozen_string_literal: true

# rperf/autorecord — profiles a whole program without changing it. Loaded
# through RUBYOPT (`-r rperf/autorecord`, as `rperf-gvl record` does): when
# RPERF_GVL_OUTPUT names a file, it starts Rperf.contention at load time
# and writes the report there when the program is over (Rperf::ProcessEnd:
# after every at_exit and after Ruby ended the other threads; gzip when the
# name ends in .gz). It does not choose where the report finally goes:
# `record` gives it a temporary file and moves it into place (autorecord
# moves it only when record is gone, see RPERF_GVL_FINAL_OUTPUT).
#
# Environment:
#   RPERF_GVL_OUTPUT     report path; nothing happens without it. Removed
#                        from ENV once read, so child processes that inherit
#                        RUBYOPT do not overwrite the parent's report.
#   RPERF_GVL_FREQUENCY  sampler frequency in Hz (Rperf::LIMITS[:frequency])
#   RPERF_GVL_MODE       sampler mode, wall (default) or cpu
#   RPERF_GVL_STATUS_FD  "FD:INODE": a socket `record` listens on (its
#                        other end). autorecord says on it that it started,
#                        then whether the report was written or why not, so
#                        record can tell a write error from a program that
#                        is not Ruby. Used only when FD is that socket;
#                        close-on-exec, so the program's own subprocesses
#                        do not inherit it. Removed from ENV once read.
#   RPERF_GVL_FINAL_OUTPUT  where `record` puts the report. When record is
#                        gone by the time the report is written (it was
#                        killed), autorecord moves the report there itself
#                        and says so on stderr. Removed from ENV once read.
#
# A program that starts a profile of its own (Rperf.start, Rperf.contention)
# wins: the whole-program profile stops at that moment, and what it recorded
# up to then is the report written at exit, with a note on stderr.
#
# A forked child follows the profile (Rperf::Fork) and writes a report of
# its own at its exit, beside the output with its pid in the name; it tells
# record "child PID PATH", and record puts it beside the output
# (report.json -> report.PID.json). A bad setting stops the program with
# one `rperf-gvl:` line and exit status 2.
module Rperf
  module Autorecord
    # Signals that must not cut the report's write short: a signal the
    # program already ended on may arrive twice (sent to the program's
    # process group by `record` and by someone else); the program is done
    # by then.
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

    # A forked child that runs another program (fork { exec ... }) writes
    # no report: it says so first, so record neither waits for that program
    # nor names the child as killed. After an exec that fails, the child
    # still writes its report at its end.
    module ExecNotice
      def exec(...)
        Autorecord.before_exec
        super
      end
    end

    # Kernel#exec is private, as every Kernel function is.
    module PrivateExecNotice
      include ExecNotice
      private :exec
    end

    @session = nil
    @report = nil
    @channel = nil

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

    # The socket RPERF_GVL_STATUS_FD names, or nil: an fd that is not
    # that socket (the number reused by a process in between) is left alone.
    def open_channel(value)
      fd, ino = value.to_s.split(":", 2).map { |part| Integer(part, 10, exception: false) }
      return nil unless fd && ino

      require "socket"
      io = Socket.for_fd(fd)
      io.autoclose = false
      stat = io.stat
      return nil unless stat.socket? && stat.ino == ino

      io.close_on_exec = true
      io
    rescue SystemCallError, ArgumentError, TypeError
      nil
    end

    # Sends one message to record; false when there is none to hear it.
    def tell(message)
      return false unless @channel

      @channel.sendmsg(message, Socket::MSG_NOSIGNAL)
      true
    rescue SystemCallError, IOError
      false
    end

    def start(output, channel, final)
      @channel = open_channel(channel)
      @final = final
      tell("started #{Process.pid}")
      require "rperf"
      require "rperf/process_end"
      @session = Rperf.contention(frequency: frequency, mode: mode)
      @pid = Process.pid
      Rperf.singleton_class.prepend(YieldToProgram)
      Rperf::Fork.after_child do
        tell("forked #{Process.pid}")
        ProcessEnd.register { finish_child(output) }
      end
      [Process.singleton_class, Kernel.singleton_class].each { |m| m.prepend(ExecNotice) }
      Kernel.prepend(PrivateExecNotice)
      guard_signals
      ProcessEnd.register { finish(output) }
    rescue Rperf::Error, ArgumentError => e
      abort "rperf-gvl: cannot start the profiler: #{e.message}"
    end

    def before_exec
      tell("none #{Process.pid}") if @pid && Process.pid != @pid
    end

    # The first of QUIET_SIGNALS ends the program as Ruby's own handler
    # would (Interrupt for INT, SignalException for the others); its copies
    # that follow are ignored from that moment, before the program has even
    # unwound, so none can cut the report short. A handler the program sets
    # later replaces this one, as it would replace Ruby's. A signal the
    # program was started with ignored (nohup; trap then returns "IGNORE")
    # stays ignored.
    def guard_signals
      QUIET_SIGNALS.each do |sig|
        previous = trap(sig) do
          QUIET_SIGNALS.each { |quiet| trap(quiet, "IGNORE") }
          sig == "INT" ? raise(Interrupt) : raise(SignalException, sig)
        end
        trap(sig, "IGNORE") if previous == "IGNORE"
      end
    end

    def finish(output)
      QUIET_SIGNALS.each { |sig| trap(sig, "IGNORE") }
      report = @report || (@session&.running? ? @session.stop : nil)
      return tell("none #{@pid}") unless report

      report.save(output, format: :json) # gzip when the name ends in .gz
      hand_over(output)
    rescue StandardError => e
      # record names the output and exits 74; without record, say it here.
      system = e.is_a?(SystemCallError) ? e : e.cause
      reason = system.is_a?(SystemCallError) ? SystemCallError.new(nil, system.errno).message : e.message
      return if tell("failed #{@pid} #{reason}"[0, 400])

      warn "rperf-gvl: cannot write the report to #{output}: #{e.message}"
    end

    # A forked child's report: beside the output with the child's pid,
    # handed to record like the main one.
    def finish_child(output)
      return unless Rperf.running? && @session

      QUIET_SIGNALS.each { |sig| trap(sig, "IGNORE") }
      path = Rperf::Fork.child_output(output)
      Rperf.stop.save(path, format: :json)
      return if @channel && tell("child #{Process.pid} #{path}") && @channel.recv(16) == "ok"

      warn "rperf-gvl: the report of process #{Process.pid} is at #{path}"
    rescue StandardError => e
      tell("none #{Process.pid}")
      warn "rperf-gvl: cannot write the report of process #{Process.pid}: #{e.message}"
    end

    # Tells record the report is written and waits for its answer (record
    # puts the report in place first). No answer: record is gone, and the
    # report goes to the final output from here.
    def hand_over(output)
      return unless @channel
      return if tell("written #{@pid}") && @channel.recv(16) == "ok"

      put_in_place(output)
    rescue SystemCallError, IOError
      put_in_place(output)
    end

    def put_in_place(output)
      gone = "rperf-gvl: record ended before the program;"
      if @final && !@final.empty? && File.dirname(@final) == File.dirname(File.expand_path(output))
        File.rename(output, @final)
        warn "#{gone} report written to #{@final}"
      else
        warn "#{gone} the report is at #{output}"
      end
    rescue Errno::ENOENT
      # record moved it just before it ended
      warn @final && File.exist?(@final) ? "#{gone} report written to #{@final}" : "#{gone} the report is at #{output}"
    rescue SystemCallError => e
      warn "#{gone} the report is at #{output} (#{e.message})"
    end
  end
end

# abort exits with status 1; `record` documents 2 for bad settings.
begin
  output = ENV.delete("RPERF_GVL_OUTPUT")
  channel = ENV.delete("RPERF_GVL_STATUS_FD")
  final = ENV.delete("RPERF_GVL_FINAL_OUTPUT")
  Rperf::Autorecord.start(output, channel, final) if output && !output.empty?
rescue SystemExit => e
  exit!(2) unless e.success?
  raise
end

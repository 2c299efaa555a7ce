# frozen_string_literal: true

module Fidelity
  # Runs one command in a process group of its own with its output in a log
  # file, and ends the whole group (by its id: TERM, then KILL) when it
  # outlives its time limit. It does not read the output.
  module TimedRun
    Result = Struct.new(:pid, :status, :timed_out, :seconds)

    module_function

    def call(argv, env:, chdir:, log:, timeout:)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      pid = Process.spawn(env, *argv, chdir: chdir, pgroup: true, in: File::NULL, %i[out err] => [log, "w"])
      waiter = Process.detach(pid)
      timed_out = waiter.join(timeout).nil?
      if timed_out
        end_group(pid, waiter)
        File.write(log, "\nfidelity: killed after #{timeout} s\n", mode: "a")
      end
      Result.new(pid, waiter.value, timed_out, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
    end

    def end_group(pid, waiter)
      %i[TERM KILL].each do |signal|
        begin
          Process.kill(signal, -pid)
        rescue Errno::ESRCH
          return
        end
        return if waiter.join(5)
      end
      waiter.join
    end
  end
end

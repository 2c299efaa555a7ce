# frozen_string_literal: true

# Servers::ServerProcess — a server child for a test: started in its own
# process group on a loopback port, waited for until it accepts
# connections, stopped by pid (TERM to its group, then KILL after a
# deadline), its output kept in a log file. It does NOT know what it runs.
require "socket"
require "timeout"

module Servers
  class ServerProcess
    attr_reader :pid, :port, :log

    # A loopback port free now (the server binds it right after).
    def self.free_port
      s = TCPServer.new("127.0.0.1", 0)
      s.addr[1]
    ensure
      s&.close
    end

    def initialize(argv, env: {}, log:, port: nil, chdir: Dir.pwd)
      @log = log
      @port = port
      @pid = Process.spawn(env, *argv, %i[out err] => [log, "a"], pgroup: true, chdir: chdir)
    end

    # Waits until the port accepts a connection (or the child exits).
    def wait_ready(timeout: 60)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
      loop do
        raise "server exited early: #{File.read(@log)[-2000..] || File.read(@log)}" if exited?
        return self if connectable?
        raise "server not ready after #{timeout} s: #{File.read(@log)[-2000..]}" if
          Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

        sleep 0.1
      end
    end

    def connectable?
      TCPSocket.new("127.0.0.1", @port).close
      true
    rescue SystemCallError
      false
    end

    def exited?
      @status ||= Process.wait2(@pid, Process::WNOHANG)&.last
      !@status.nil?
    end

    # TERM to the group, then KILL; returns the exit status.
    def stop(timeout: 20)
      return @status if exited?

      Process.kill(:TERM, -@pid)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
      until exited?
        if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
          Process.kill(:KILL, -@pid)
          Process.wait(@pid)
          return @status = :killed
        end
        sleep 0.05
      end
      @status
    rescue Errno::ESRCH
      @status
    end
  end
end

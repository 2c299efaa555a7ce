# frozen_string_literal: true

# Rperf::ProcessEnd: a block run when the program is over — after its
# at_exit handlers and after Ruby ended its other threads — with GC.stress
# off, and not in forked children.
require "tmpdir"
require "rbconfig"
require_relative "contention_helper"

class TestProcessEnd < Test::Unit::TestCase
  INCLUDES = $LOAD_PATH.select { |d| File.exist?(File.join(d, "rperf.rb")) }.flat_map { |d| ["-I", File.expand_path(d)] }

  def run_child(source)
    IO.popen([RbConfig.ruby, *INCLUDES, "-e", source], err: %i[child out], &:read).tap do |out|
      assert $?.success?, out
    end
  end

  def test_runs_after_at_exit_and_after_the_other_threads_ended
    Dir.mktmpdir do |dir|
      log = File.join(dir, "log")
      run_child(<<~RUBY)
        require "rperf/process_end"
        note = ->(line) { File.write(#{log.inspect}, line + "\\n", mode: "a") }
        Rperf::ProcessEnd.register { note.("end stress=\#{GC.stress} threads=\#{Thread.list.count(&:alive?)}") }
        main = Process.pid
        at_exit { note.("at_exit") if Process.pid == main }
        ready = Thread::Queue.new
        Thread.new do
          ready << 1
          sleep
        ensure
          note.("thread ended")
        end
        ready.pop
        GC.stress = true
        pid = fork { note.("child") }
        Process.wait(pid)
      RUBY
      assert_equal ["child", "at_exit", "thread ended", "end stress=false threads=0"], File.readlines(log, chomp: true)
    end
  end

  def test_not_after_exit!
    Dir.mktmpdir do |dir|
      log = File.join(dir, "log")
      run_child(<<~RUBY)
        require "rperf/process_end"
        Rperf::ProcessEnd.register { File.write(#{log.inspect}, "end") }
        exit!(0)
      RUBY
      refute File.exist?(log)
    end
  end
end

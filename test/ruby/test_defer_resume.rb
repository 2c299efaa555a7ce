# Deferred profiles (defer: true): a thread's state is not followed while the
# profiler is paused, so on resume it must not keep a state it held at pause
# time. The main thread was running when the profile started (paused); it then
# blocks in Thread#value while a worker's Rperf.profile block runs. It must be
# charged as blocked (or waiting) during the block, not as running.
require_relative "contention_helper"

class TestDeferResume < Test::Unit::TestCase
  include ContentionHelper

  def test_thread_blocked_during_pause_is_not_running_after_resume
    Rperf.contention(defer: true)
    worker = Thread.new do
      Thread.current.name = "worker"
      sleep 0.05 # the main thread is inside Thread#value by now
      Rperf.profile { burn_work(0.15) }
    end
    worker.value
    report = Rperf.contention_stop
    main = report.threads.find { |t| t.seq == 1 }
    w = report.threads.find { |t| t.name == "worker" }
    assert_not_nil main
    assert_not_nil w
    assert_operator w.running_ns, :>, 50_000_000, w.to_h.inspect
    # The main thread did no Ruby work during the profile block.
    assert_operator main.running_ns, :<, w.running_ns * 0.2, main.to_h.inspect
  ensure
    Rperf.stop if Rperf.running?
  end
end

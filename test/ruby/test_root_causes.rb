# frozen_string_literal: true

# Root causes and critical paths on known workloads with real threads: a
# Mutex convoy (the holder sleeps inside the lock while three others queue;
# Ruby wakes them one at a time, so the direct view charges most of the wait
# to the waiters themselves), a request that holds a Mutex while it waits
# for the GVL a CPU hog holds, a Thread#join on a worker that waits on a
# Queue fed late, and a join on a thread waiting on another Ractor. Each
# asserts a law that holds whatever the scheduler does: shares of at least
# 95 % (or 90 % where the GVL's hand-offs add a few ms), the hog's part no
# larger than the time the request waited for the GVL, conservation exact.
# Threads are named rc-*: a report also lists threads other tests left
# alive, and names are how these tests find theirs.
require_relative "contention_helper"

class TestRootCauses < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  def now_ns = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)

  def seq_of(report, name) = report.thread(name).seq

  # A waiter's explained waits by root thread seq, from the JSON summary
  # (wait: "gvl", "blocked" or nil for both).
  def roots_of(report, waiter, wait: nil)
    rows = JSON.parse(report.to_summary_json)["root_causes"]["waiters"]
    rows.select { |r| r["waiter"] == waiter && (wait.nil? || r["wait"] == wait) }
  end

  # The thread's blocked intervals of a cause, as [start, end] on the report axis.
  def blocked_spans(report, seq, cause)
    doc = report.to_h
    causes = doc["causes"]
    by_start = doc["interval_causes"].to_a.select { |t, _, c, _| t == seq && causes[c] == cause }.map { |r| r[1] }
    report.intervals.select { |iv| iv.thread == seq && iv.state == 2 && by_start.include?(iv.start_ns) }
          .map { |iv| [iv.start_ns, iv.end_ns] }
  end

  def overlap(spans_a, spans_b)
    spans_a.sum { |a0, a1| spans_b.sum { |b0, b1| [[a1, b1].min - [a0, b0].max, 0].max } }
  end

  # n threads named prefix-0.. that each take the lock once.
  def lock_waiters(lock, n, prefix)
    n.times.map do |i|
      Thread.new do
        Thread.current.name = "#{prefix}-#{i}"
        lock.synchronize { nil }
      end
    end
  end

  def hold_the_lock(lock, ready)
    lock.synchronize do
      ready << true
      sleep 0.2
    end
  end

  # One thread holds a Mutex for 200 ms; three wait for it.
  def test_mutex_convoy_roots_at_the_holder
    lock = Mutex.new
    ready = Queue.new
    report = Rperf.contention do
      holder = Thread.new do
        Thread.current.name = "rc-holder"
        hold_the_lock(lock, ready)
      end
      ready.pop
      [holder, *lock_waiters(lock, 3, "rc-waiter")].each(&:join)
    end
    assert_conservation(report)
    holder = seq_of(report, "rc-holder")
    waiters = (0..2).map { |i| seq_of(report, "rc-waiter-#{i}") }
    mutex_ns = waiters.sum { |w| blocked_spans(report, w, "mutex").sum { |a, b| b - a } }
    assert_operator mutex_ns, :>=, 0.45e9, "three threads waited about 200 ms each for the lock"
    blocked = waiters.flat_map { |w| roots_of(report, w, wait: "blocked") }
    assert_equal mutex_ns, blocked.sum { |r| r["ns"] }, "their Mutex waits are explained to the ns"
    by_holder = blocked.select { |r| r["thread"] == holder }.sum { |r| r["ns"] }
    assert_operator by_holder, :>=, 0.95 * mutex_ns, "the holder is the root of at least 95 % of the Mutex wait"
    # The direct view charged it mostly to the waiters themselves.
    direct = report.blocked_edges.select { |e| waiters.include?(e.waiter) && e.releaser == holder }.sum(&:blocked_ns)
    assert_operator direct, :<, 0.5 * mutex_ns, "directly, the holder released only the first waiter"
    root = report.root_causes.find { |r| r.thread == holder && r.kind == "blocked" }
    refute_nil root
    assert_equal "sleep", root.cause
    assert_match(/Kernel#sleep < .*hold_the_lock/, root.stacks.first["text"], "the stack inside the synchronize block")
    path = report.critical_path(thread: "rc-waiter-2")
    deep = path["segments"].max_by { |s| s["end_ns"] - s["start_ns"] }
    assert_equal holder, deep["root"]["thread"]
    assert_operator deep["hops"].size, :>=, 1
  end

  # Computes until told to stop (a Queue that gets an item), so that it is
  # computing for all of the request's critical section, however late that
  # comes on a busy machine.
  def hog_compute(stop)
    x = 0
    x = (x + ContentionHelper.spin(20_000)) % 1_000_003 while stop.empty?
    x
  end

  # A request holds a Mutex and computes, sharing the GVL with a hog; two
  # threads wait for the Mutex meanwhile.
  def test_lock_holder_waiting_for_the_gvl_roots_at_the_hog
    lock = Mutex.new
    locked = Queue.new
    hog_started = Queue.new
    stop = Queue.new
    held = []
    ContentionHelper.iterations_per_second # calibrated before, not inside the critical section
    report = Rperf.contention do
      hog = Thread.new do
        Thread.current.name = "rc-hog"
        hog_started << true
        hog_compute(stop)
      end
      hog_started.pop
      waiting = Queue.new
      request = Thread.new do
        Thread.current.name = "rc-request"
        lock.synchronize do
          locked << true
          # Computes once both waiters are blocked on the lock.
          waiters = waiting.pop
          Thread.pass until waiters.all? { |t| t.status == "sleep" }
          held << now_ns
          burn_work(0.3)
          held << now_ns
        end
      end
      locked.pop
      waiters = lock_waiters(lock, 2, "rc-lock-waiter")
      waiting << waiters
      [request, *waiters].each(&:join)
      stop << true
      hog.join
    end
    assert_conservation(report)
    start = report.meta["start_monotonic_ns"]
    holding = [[held[0] - start, held[1] - start]]
    request = seq_of(report, "rc-request")
    hog = seq_of(report, "rc-hog")
    gvl_waits = ->(seq) { report.intervals.select { |iv| iv.thread == seq && iv.state == 1 }.map { |iv| [iv.start_ns, iv.end_ns] } }
    on_chains = [request, seq_of(report, "rc-lock-waiter-0"), seq_of(report, "rc-lock-waiter-1")].flat_map(&gvl_waits)
    total_overlap = 0
    total_hog = 0
    %w[rc-lock-waiter-0 rc-lock-waiter-1].each do |name|
      waiter = seq_of(report, name)
      waits = blocked_spans(report, waiter, "mutex")
      by_hog = roots_of(report, waiter, wait: "blocked").select { |r| r["thread"] == hog }.sum { |r| r["ns"] }
      # At most: the GVL waits of the threads its chain can pass through
      # (the request, and the waiter woken before it), within its Mutex waits.
      assert_operator by_hog, :<=, overlap(on_chains, waits) + 2_000_000,
                      "#{name}: the hog explains no more than the threads before it waited for the GVL"
      # At least (nearly): the request's GVL waits while it held the lock.
      window = waits.flat_map { |w0, w1| holding.map { |h0, h1| [[w0, h0].max, [w1, h1].min] } }.select { |a, b| b > a }
      total_overlap += overlap(gvl_waits.call(request), window)
      total_hog += by_hog
    end
    assert_operator total_overlap, :>=, 0.03e9, "the request waited for the GVL while it held the lock"
    assert_operator total_hog, :>=, 0.9 * total_overlap,
                    "the hog is the root of the waiters' wait while the request waited for the GVL"
    root = report.root_causes.find { |r| r.thread == hog && r.kind == "running" }
    refute_nil root
    assert_match(/hog_compute/, root.stacks.map { |s| s["text"] }.join("\n"), "the hog's computing method")
  end

  def feed_late(queue)
    sleep 0.3
    queue << :work
  end

  # A join on a worker that waits on a Queue a feeder fills late.
  def test_join_on_a_worker_roots_at_the_feeder
    queue = Queue.new
    report = Rperf.contention do
      worker = Thread.new do
        Thread.current.name = "rc-worker"
        queue.pop
      end
      feeder = Thread.new do
        Thread.current.name = "rc-feeder"
        feed_late(queue)
      end
      joiner = Thread.new do
        Thread.current.name = "rc-joiner"
        worker.join
      end
      [joiner, feeder].each(&:join)
    end
    assert_conservation(report)
    joiner = seq_of(report, "rc-joiner")
    worker = seq_of(report, "rc-worker")
    feeder = seq_of(report, "rc-feeder")
    join_ns = blocked_spans(report, joiner, "join").sum { |a, b| b - a }
    assert_operator join_ns, :>=, 0.2e9
    direct = report.blocked_edges.select { |e| e.waiter == joiner && e.cause == "join" }
    assert_equal [worker], direct.map(&:releaser).uniq, "directly, the worker ended the join"
    by_feeder = roots_of(report, joiner, wait: "blocked").select { |r| r["thread"] == feeder }
    assert_operator by_feeder.sum { |r| r["ns"] }, :>=, 0.9 * join_ns, "the feeder is the root of the join"
    assert_equal ["sleep"], by_feeder.select { |r| r["ns"] > 0.1 * join_ns }.map { |r| r["cause"] }.uniq
    root = report.root_causes.find { |r| r.thread == feeder && r.cause == "sleep" }
    assert_match(/feed_late/, root.stacks.first["text"])
    text = report.to_critical_path(thread: "rc-joiner")
    assert_match(/join → rc-worker \(#\d+\) queue → rc-feeder \(#\d+\): blocked: sleep/, text)
  end

  # A join on a thread that waits on another Ractor: the chain is cut at the
  # Ractor boundary and says so.
  def test_chain_cut_at_the_ractor_boundary
    report = contention_in_child(<<~RUBY)
      r = Ractor.new { sleep 0.3; :done }
      taker = Thread.new { Thread.current.name = "rc-taker"; r.take }
      joiner = Thread.new { Thread.current.name = "rc-joiner"; taker.join }
      joiner.join
    RUBY
    assert_conservation(report)
    joiner = seq_of(report, "rc-joiner")
    taker = seq_of(report, "rc-taker")
    join_ns = blocked_spans(report, joiner, "join").sum { |a, b| b - a }
    assert_operator join_ns, :>=, 0.2e9
    cut = roots_of(report, joiner, wait: "blocked").select { |r| r["thread"] == taker && r["kind"] == "ractor" }
    assert_operator cut.sum { |r| r["ns"] }, :>=, 0.9 * join_ns, "cut at the taker's Ractor#take"
    assert_equal "waiting on another Ractor (cut)", cut.first["what"]
  end

  # Counters mode keeps no timeline: the root-cause views say so.
  def test_counters_mode_says_root_causes_need_a_timeline
    report = Rperf.contention(mode: :counters) { Thread.new { sleep 0.01 }.join }
    error = assert_raise(Rperf::RenderError) { report.root_causes }
    assert_match(/counters mode.*need a full recording/, error.message)
    error = assert_raise(Rperf::RenderError) { report.critical_path(thread: 1) }
    assert_match(/need a full recording/, error.message)
    assert_match(/root causes need a full recording/, report.to_summary)
  end

  def test_arguments
    report = Rperf.contention { Thread.new { sleep 0.01 }.join }
    assert_raise(ArgumentError) { report.critical_path }
    assert_raise(ArgumentError) { report.critical_path(thread: 1, label: { a: "b" }) }
    assert_raise(ArgumentError) { report.critical_path(label: { a: "b", c: "d" }) }
    assert_raise_message(/no thread has that seq or name/) { report.critical_path(thread: "nobody") }
    assert_raise_message(/blame: :sideways is invalid/) { report.to_dot(blame: :sideways) }
    assert_match(/Root causes/, report.to_dot(blame: :root))
  end
end

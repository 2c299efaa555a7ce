# frozen_string_literal: true

# Blocked causes and release edges (report minor 1): known workloads — a
# Mutex held while others wait, a Queue fed by a producer, Thread#join,
# sleep, a pipe read, a ConditionVariable, Ractor.receive — classified by
# the method each thread was blocked in, with the thread that released the
# wait where another thread ends it. Every report is also checked by the
# conservation laws: per thread and per label row the causes sum to
# blocked_ns exactly, and per waiter the release edges plus
# release_unknown_ns equal its releasable (mutex/condvar/queue/join) time.
# Reports are read as report.json (the raw document), the format readers see.
require "json"
require "tmpdir"
require_relative "contention_helper"

class TestBlockedCauses < Test::Unit::TestCase
  include ContentionHelper

  RELEASABLE = %w[mutex condvar queue join].freeze

  def teardown
    Rperf.stop if Rperf.running?
  end

  def doc(report) = JSON.parse(report.to_json)

  def thread_named(doc, name)
    t = doc["threads"].find { |row| row["name"] == name }
    refute_nil t, "thread #{name} is in the report"
    t
  end

  def cause_ns(thread, cause) = thread.fetch("blocked_by_cause").fetch(cause, 0)

  def edges_of(doc, waiter) = doc.fetch("blocked_edges").select { |e| e["waiter"] == waiter }

  # The laws every report obeys, whatever the workload.
  def assert_cause_laws(doc)
    assert_equal 1, doc["minor"]
    assert_equal %w[unknown io sleep mutex condvar queue join ractor process other], doc["causes"]
    refute_empty doc["threads"]
    counters = doc.dig("meta", "recording") == "counters"
    doc["threads"].each do |t|
      by_cause = t.fetch("blocked_by_cause")
      assert_equal t["blocked_ns"], by_cause.values.sum, "thread #{t['seq']}: causes sum to blocked_ns"
      by_cause.each { |c, ns| assert_operator ns, :>, 0, "thread #{t['seq']}: #{c} is nonzero" }
      methods = doc.fetch("blocked_methods").select { |m| m["thread"] == t["seq"] }
      assert_equal by_cause.except("unknown").values.sum, methods.sum { |m| m["blocked_ns"] },
                   "thread #{t['seq']}: its blocked methods sum to its classified time"
      next if counters

      releasable = RELEASABLE.sum { |c| by_cause.fetch(c, 0) }
      assert_equal releasable, edges_of(doc, t["seq"]).sum { |e| e["blocked_ns"] } + t.fetch("release_unknown_ns"),
                   "thread #{t['seq']}: release edges + release_unknown_ns = releasable time"
    end
    doc["label_totals"].each do |row|
      assert_equal row["blocked_ns"], row.fetch("blocked_by_cause").values.sum,
                   "label row #{row['thread']}/#{row['label_set']}: causes sum to blocked_ns"
    end
    return if counters

    doc["blocked_edges"].each do |e|
      assert_includes RELEASABLE, e["cause"], "release edges only for releasable causes"
      assert_operator e["releaser"], :>=, 1
    end
    blocked = doc["intervals"].select { |iv| iv[1] == 2 }.to_h { |iv| [[iv[0], iv[2]], iv] }
    doc["interval_causes"].each do |row|
      assert_equal 4, row.size
      assert blocked.key?([row[0], row[1]]), "interval cause #{row.inspect} names a blocked interval"
    end
  end

  # Blocked intervals of a thread with their cause names and releasers.
  def interval_causes_of(doc, seq)
    doc["interval_causes"].select { |row| row[0] == seq }.map { |row| [doc["causes"][row[2]], row[3]] }
  end

  def mutex_workload
    m = Mutex.new
    held = Queue.new
    holder = Thread.new do
      Thread.current.name = "holder"
      m.synchronize do
        held << true
        sleep 0.2
      end
    end
    held.pop
    waiters = 3.times.map do |i|
      Thread.new do
        Thread.current.name = "waiter#{i}"
        m.synchronize { nil }
      end
    end
    (waiters + [holder]).each(&:join)
  end

  # A Mutex held 200 ms while three threads wait for it: ~600 ms blocked on
  # mutex, each wait released by a thread that held it (Ruby hands the lock
  # over one waiter at a time, so the holder wakes the first and each
  # waiter wakes the next).
  def test_mutex_waiters_and_their_releasers
    d = doc(Rperf.contention { mutex_workload })
    assert_cause_laws(d)
    waiters = 3.times.map { |i| thread_named(d, "waiter#{i}") }
    holder = thread_named(d, "holder")
    mutex = waiters.sum { |t| cause_ns(t, "mutex") }
    assert_operator mutex, :>=, 0.45e9, "three waiters wait most of the 200 ms hold each"
    assert_operator mutex, :<=, 1.2e9
    lock_holders = [holder["seq"]] + waiters.map { |t| t["seq"] }
    released = 0
    waiters.each do |t|
      assert_operator cause_ns(t, "mutex"), :>=, 0.1e9, "#{t['name']} waited on the mutex"
      edges = edges_of(d, t["seq"])
      edges.each do |e|
        assert_equal "mutex", e["cause"]
        assert_includes lock_holders, e["releaser"], "#{t['name']} was released by a thread that held the lock"
      end
      released += edges.sum { |e| e["blocked_ns"] }
      assert_includes interval_causes_of(d, t["seq"]).map(&:first), "mutex"
      assert_includes d["blocked_methods"].select { |m| m["thread"] == t["seq"] }.map { |m| m["method"] },
                      "Thread::Mutex#synchronize"
    end
    assert_operator released, :>=, mutex * 0.9, "the waits' releasers are known"
    assert(d["blocked_edges"].any? { |e| e["releaser"] == holder["seq"] }, "the holder released a waiter")
    assert_equal 0, holder.fetch("release_unknown_ns")
    assert_operator cause_ns(holder, "sleep"), :>=, 0.18e9, "the holder slept inside the lock"
  end

  # A producer feeding a Queue every 10 ms to two consumers: the consumers
  # wait on the queue and the producer releases them.
  def test_queue_consumers_released_by_the_producer
    d = doc(Rperf.contention do
      q = Queue.new
      consumers = 2.times.map do |i|
        Thread.new do
          Thread.current.name = "consumer#{i}"
          nil while q.pop
        end
      end
      producer = Thread.new do
        Thread.current.name = "producer"
        20.times do |i|
          sleep 0.01
          q << i + 1
        end
        2.times { q << nil }
      end
      (consumers + [producer]).each(&:join)
    end)
    assert_cause_laws(d)
    producer = thread_named(d, "producer")
    2.times do |i|
      t = thread_named(d, "consumer#{i}")
      queue = cause_ns(t, "queue")
      assert_operator queue, :>=, 0.1e9, "consumer#{i} waits for the producer"
      by_producer = edges_of(d, t["seq"]).select { |e| e["releaser"] == producer["seq"] }
      assert_operator by_producer.sum { |e| e["blocked_ns"] }, :>=, queue * 0.9, "the producer released it"
      assert(by_producer.all? { |e| e["cause"] == "queue" })
      assert_includes interval_causes_of(d, t["seq"]), ["queue", producer["seq"]]
    end
    assert_operator cause_ns(producer, "sleep"), :>=, 0.15e9
  end

  # Thread#join on a 300 ms worker: the joiner is released by the worker.
  def test_join_released_by_the_worker
    d = doc(Rperf.contention do
      Thread.current.name = "joiner"
      Thread.new do
        Thread.current.name = "worker"
        sleep 0.3
      end.join
    end)
    assert_cause_laws(d)
    joiner = thread_named(d, "joiner")
    worker = thread_named(d, "worker")
    assert_operator cause_ns(joiner, "join"), :>=, 0.27e9
    edges = edges_of(d, joiner["seq"])
    assert_equal [[worker["seq"], "join"]], edges.map { |e| [e["releaser"], e["cause"]] }.uniq
    assert_operator edges.sum { |e| e["blocked_ns"] }, :>=, cause_ns(joiner, "join") * 0.9
    assert_operator cause_ns(worker, "sleep"), :>=, 0.27e9
  end

  # sleep and a pipe read: classified, and nobody releases them.
  def test_sleep_and_pipe_read_have_no_releaser
    r, w = IO.pipe
    d = doc(Rperf.contention do
      sleeper = Thread.new do
        Thread.current.name = "sleeper"
        sleep 0.2
      end
      reader = Thread.new do
        Thread.current.name = "reader"
        r.read(5)
      end
      sleep 0.25
      w.write("hello")
      [sleeper, reader].each(&:join)
    end)
    assert_cause_laws(d)
    sleeper = thread_named(d, "sleeper")
    reader = thread_named(d, "reader")
    # A sleep never ends early. The read lasts from when the reader first
    # runs until the write 0.25 s on, and on a busy machine a new thread may
    # wait long for its first turn (88 ms seen): its blocked time is the
    # read's, and with its waits it spans most of those 0.25 s.
    assert_operator cause_ns(sleeper, "sleep"), :>=, 0.18e9
    assert_operator cause_ns(reader, "io"), :>=, reader["blocked_ns"] * 0.95, reader.inspect
    assert_operator reader["blocked_ns"] + reader["gvl_wait_ns"], :>=, 0.15e9, reader.inspect
    assert_includes d["blocked_methods"].select { |m| m["thread"] == reader["seq"] }.map { |m| m["cause"] }, "io"
    [sleeper, reader].each do |t|
      assert_empty edges_of(d, t["seq"]), "#{t['name']}: no release edges"
      assert_equal 0, t["release_unknown_ns"]
      assert(interval_causes_of(d, t["seq"]).all? { |_cause, releaser| releaser.zero? })
    end
    assert_includes interval_causes_of(d, sleeper["seq"]).map(&:first), "sleep"
    assert_includes interval_causes_of(d, reader["seq"]).map(&:first), "io"
  ensure
    [r, w].each { |io| io&.close }
  end

  # ConditionVariable#wait: condvar time, released by the signalling thread.
  def test_condition_variable_released_by_the_signaller
    d = doc(Rperf.contention do
      m = Mutex.new
      cv = ConditionVariable.new
      ready = false
      waiter = Thread.new do
        Thread.current.name = "cv_waiter"
        m.synchronize { cv.wait(m) until ready }
      end
      signaller = Thread.new do
        Thread.current.name = "signaller"
        sleep 0.2
        m.synchronize do
          ready = true
          cv.signal
        end
      end
      [waiter, signaller].each(&:join)
    end)
    assert_cause_laws(d)
    waiter = thread_named(d, "cv_waiter")
    signaller = thread_named(d, "signaller")
    assert_operator cause_ns(waiter, "condvar"), :>=, 0.15e9
    by_signaller = edges_of(d, waiter["seq"]).select { |e| e["releaser"] == signaller["seq"] }
    assert_operator by_signaller.sum { |e| e["blocked_ns"] }, :>=, cause_ns(waiter, "condvar") * 0.9
  end

  # Per (thread, label set): the label rows split a thread's causes, and
  # together they give the thread's totals.
  def test_label_rows_by_cause
    d = doc(Rperf.contention do
      Thread.new do
        Thread.current.name = "labelled"
        Rperf.label(step: "nap") { sleep 0.1 }
        Rperf.label(step: "lock") { mutex_workload }
      end.join
    end)
    assert_cause_laws(d)
    t = thread_named(d, "labelled")
    rows = d["label_totals"].select { |row| row["thread"] == t["seq"] }
    assert_operator rows.size, :>=, 2
    assert_operator rows.map { |row| row["blocked_by_cause"].fetch("sleep", 0) }.max, :>=, 0.09e9
    %w[sleep join].each do |cause|
      assert_equal cause_ns(t, cause), rows.sum { |row| row["blocked_by_cause"].fetch(cause, 0) },
                   "label rows split the thread's #{cause} time"
    end
  end

  # Counters mode: causes in threads and label rows, no timeline causes
  # and no release edges; Rperf.thread_contention gains blocked_by_cause.
  def test_counters_mode
    own = nil
    d = doc(Rperf.contention(mode: :counters) do
      mutex_workload
      sleep 0.05
      own = Rperf.thread_contention
    end)
    assert_cause_laws(d)
    refute d.key?("interval_causes")
    refute d.key?("blocked_edges")
    assert_equal 0, d.dig("stats", "release_stacks"), "counters mode captures no releaser stack"
    assert_empty d["stacks"]
    waiters = 3.times.map { |i| thread_named(d, "waiter#{i}") }
    assert_operator waiters.sum { |t| cause_ns(t, "mutex") }, :>=, 0.45e9
    assert_operator own.fetch(:blocked_by_cause).fetch(:sleep, 0), :>=, 0.045e9
    assert_equal own[:blocked_ns], own[:blocked_by_cause].values.sum
  end

  # snapshot(clear: true): each report of the series obeys the laws, and
  # the series adds up to the whole wait (a wait open at a cut is split).
  def test_snapshot_series
    Rperf.start(mode: :wall)
    m = Mutex.new
    held = Queue.new
    holder = Thread.new do
      m.synchronize do
        held << true
        sleep 0.3
      end
    end
    held.pop
    waiter = Thread.new do
      Thread.current.name = "series_waiter"
      m.synchronize { nil }
    end
    reports = []
    3.times do
      sleep 0.08
      reports << doc(Rperf.snapshot(clear: true))
    end
    [holder, waiter].each(&:join)
    reports << doc(Rperf.stop)
    reports.each { |d| assert_cause_laws(d) }
    rows = reports.map { |d| d["threads"].find { |t| t["name"] == "series_waiter" } }.compact
    total = rows.sum { |t| cause_ns(t, "mutex") }
    assert_operator total, :>=, 0.2e9, "the waiter's mutex wait spans the series"
    assert_operator rows.count { |t| cause_ns(t, "mutex").positive? }, :>=, 2, "the open wait is split at cuts"
    edges = reports.sum { |d| edges_of(d, rows.first["seq"]).sum { |e| e["blocked_ns"] } }
    assert_operator edges, :>, 0, "the wait's release is in the report where it ended"
    with_stack = reports.sum do |d|
      released_from(d, edges_of(d, rows.first["seq"]), "Thread::Mutex#synchronize")
    end
    assert_equal edges, with_stack, "the release keeps the holder's stack in the report where it ended"
  end

  # Frame labels of a report stack, leaf first.
  def stack_labels(doc, stack_id) = doc["stacks"].fetch(stack_id).map { |f| doc["frames"].fetch(f)[1] }

  # The release edges' rows of one edge (waiter, releaser, cause, label
  # sets) are one per releaser stack; the key with the stack is unique.
  def assert_release_rows_unique(doc)
    keys = doc["blocked_edges"].map do |e|
      e.values_at("ractor", "waiter", "releaser", "cause", "waiter_label_set", "releaser_label_set", "releaser_stack")
    end
    assert_equal keys.size, keys.uniq.size, "one row per edge and releaser stack"
  end

  # The report of a release-stack workload as report.json, checked by the
  # laws every such report obeys.
  def release_doc(report)
    d = doc(report)
    assert_cause_laws(d)
    assert_release_rows_unique(d)
    d
  end

  # blocked_ns of `rows` whose releaser stack holds a frame labelled `label`.
  def released_from(doc, rows, label)
    rows.select { |e| e["releaser_stack"] && stack_labels(doc, e["releaser_stack"]).include?(label) }
        .sum { |e| e["blocked_ns"] }
  end

  def hold_lock_in_distinctive_method(lock, held)
    Thread.current.name = "lock_holder"
    lock.synchronize do
      held << true
      sleep 0.2
    end
  end

  def take_lock_in_named_waiter_method(lock, name)
    Thread.current.name = name
    lock.synchronize { nil }
  end

  # Lock blame: a thread holds a Mutex 200 ms inside a named method while
  # three wait. The releases the holder made carry its stack (the method
  # holding the lock under the releasing Mutex#synchronize), the waiters'
  # hand-overs theirs; each edge's rows split its time by stack exactly.
  def test_release_stacks_name_the_lock_holder
    report = Rperf.contention do
      lock = Mutex.new
      held = Queue.new
      holder = Thread.new { hold_lock_in_distinctive_method(lock, held) }
      held.pop
      waiters = 3.times.map { |i| Thread.new { take_lock_in_named_waiter_method(lock, "lock_waiter#{i}") } }
      (waiters + [holder]).each(&:join)
    end
    d = release_doc(report)
    holder_seq = thread_named(d, "lock_holder")["seq"]
    waiter_seqs = 3.times.map { |i| thread_named(d, "lock_waiter#{i}")["seq"] }
    by_holder = d["blocked_edges"].select { |e| e["releaser"] == holder_seq && e["cause"] == "mutex" }
    released = by_holder.sum { |e| e["blocked_ns"] }
    assert_operator released, :>=, 0.15e9, "the holder released a waiter after ~200 ms"
    assert_operator released_from(d, by_holder, "#{self.class}#hold_lock_in_distinctive_method"), :>=, released * 0.9,
                    "the holder's releases carry the method that held the lock"
    by_holder.select { |e| e["releaser_stack"] }.each do |e|
      assert_equal "Thread::Mutex#synchronize", stack_labels(d, e["releaser_stack"]).first,
                   "the release stack's leaf is the releasing method"
    end
    handed_over = d["blocked_edges"].select { |e| waiter_seqs.include?(e["releaser"]) && e["cause"] == "mutex" }
    assert_operator released_from(d, handed_over, "#{self.class}#take_lock_in_named_waiter_method"), :>=,
                    handed_over.sum { |e| e["blocked_ns"] } * 0.9, "a waiter's hand-over carries its own method"
    refute_empty handed_over, "the waiters handed the lock on"
    assert_operator d.dig("stats", "release_stacks"), :>=, 3
    assert_equal 0, d.dig("stats", "dropped_release_stacks")

    rows = report.blocked_edges.select { |e| e.releaser == holder_seq && e.releaser_stack }
    refute_empty rows, "Report#blocked_edges rows carry the releaser stack"
    summary = JSON.parse(report.to_summary_json)
    stacks = summary.fetch("top_release_stacks")
    assert_equal d["blocked_edges"].select { |e| e["releaser_stack"] }.sum { |e| e["blocked_ns"] },
                 stacks.sum { |s| s["ns"] }, "the summary's release stacks sum to the rows with a stack"
    assert_match(/Top release stacks.*\n.*\n.*hold_lock_in_distinctive_method/m, report.to_summary,
                 "the text summary shows the code that held the lock")
  end

  def produce_into_queue(queue, consumers)
    20.times do |i|
      sleep 0.01
      queue << i + 1
    end
    consumers.times { queue << nil }
  end

  # A Queue producer in a named method: the consumers' queue edges from
  # the producer carry the producer's stack with Queue#push at its leaf.
  def test_release_stacks_name_the_queue_producer
    report = Rperf.contention do
      q = Queue.new
      consumers = 2.times.map { Thread.new { nil while q.pop } }
      producer = Thread.new do
        Thread.current.name = "named_producer"
        produce_into_queue(q, 2)
      end
      (consumers + [producer]).each(&:join)
    end
    d = release_doc(report)
    producer = thread_named(d, "named_producer")["seq"]
    by_producer = d["blocked_edges"].select { |e| e["releaser"] == producer && e["cause"] == "queue" }
    released = by_producer.sum { |e| e["blocked_ns"] }
    assert_operator released, :>=, 0.1e9
    assert_operator released_from(d, by_producer, "#{self.class}#produce_into_queue"), :>=, released * 0.9
    assert_operator released_from(d, by_producer, "Thread::Queue#push"), :>=, released * 0.9
  end

  # Release stacks that do not fit (a sample buffer of one record, drained
  # every 10 ms, against thousands of Queue releases) are counted, and their
  # time stays in rows without releaser_stack: the rows still add up, and
  # every stack a row names is one its releases had (Queue#push at the leaf).
  def test_release_stacks_that_do_not_fit_are_counted
    ENV["RPERF_SAMPLER_BUFFER_SAMPLES"] = "1"
    report = begin
      Rperf.contention(frequency: 1) do
        ping = Queue.new
        pong = Queue.new
        other = Thread.new { 2000.times { pong << ping.pop } }
        2000.times do
          ping << 1
          pong.pop
        end
        other.join
      end
    ensure
      ENV.delete("RPERF_SAMPLER_BUFFER_SAMPLES")
    end
    d = release_doc(report)
    assert_operator d.dig("stats", "dropped_release_stacks"), :>, 0
    queue = d["blocked_edges"].select { |e| e["cause"] == "queue" }
    assert_operator queue.reject { |e| e["releaser_stack"] }.sum { |e| e["count"] }, :>, 0,
                    "the releases without a stack keep their time in a row without one"
    queue.select { |e| e["releaser_stack"] }.each do |e|
      assert_equal "Thread::Queue#push", stack_labels(d, e["releaser_stack"]).first
    end
  end

  # Release stacks across clearing cuts while threads of another Ractor keep
  # releasing each other (the only releases that can happen while a report
  # reads the threads): each stack must land in the report that has its
  # release's time, or an edge's stacks would exceed it and the edge would
  # keep none. So over the series the releases without a stack are exactly
  # those counted as dropped.
  def test_release_stacks_across_cuts_with_a_ractor
    Dir.mktmpdir do |dir|
      path = File.join(dir, "series.json")
      run_ruby_child(dir, <<~RUBY, timeout: 90)
        Warning[:experimental] = false
        require "rperf"
        require "json"
        Rperf.start(mode: :wall, frequency: 100, timeline: true)
        r = Ractor.new do
          ping = Queue.new
          pong = Queue.new
          other = Thread.new { nil while (v = ping.pop) && pong << v }
          deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 0.4
          trips = 0
          while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
            ping << 1
            pong.pop
            trips += 1
          end
          ping << nil
          other.join
          trips
        end
        reports = []
        40.times do
          sleep 0.01
          reports << JSON.parse(Rperf.snapshot(clear: true).to_json)
        end
        trips = r.take
        reports << JSON.parse(Rperf.stop.to_json)
        File.write(#{path.inspect}, JSON.generate({ "trips" => trips, "reports" => reports }))
      RUBY
      series = JSON.parse(File.read(path))
      reports = series.fetch("reports")
      reports.each { |d| assert_cause_laws(d) }
      queue = reports.flat_map { |d| d["blocked_edges"].select { |e| e["cause"] == "queue" } }
      with_stack = queue.select { |e| e["releaser_stack"] }.sum { |e| e["count"] }
      without = queue.reject { |e| e["releaser_stack"] }.sum { |e| e["count"] }
      dropped = reports.sum { |d| d.dig("stats", "dropped_release_stacks") }
      assert_operator with_stack, :>=, series.fetch("trips"), "the Ractor's releases carry their stacks"
      assert_equal dropped, without, "a release without a stack is one counted as dropped"
    end
  end

  # Ractor.receive: ractor time in the receiving Ractor, without a releaser.
  def test_ractor_receive
    report = contention_in_child(<<~RUBY)
      r = Ractor.new { Ractor.receive * 2 }
      sleep 0.2
      r.send(21)
      r.take
    RUBY
    d = JSON.parse(report.to_json)
    assert_cause_laws(d)
    receiver = d["threads"].find { |t| t["ractor"] != 1 && cause_ns(t, "ractor").positive? }
    refute_nil receiver, "a thread of the new Ractor waited in Ractor.receive"
    assert_operator cause_ns(receiver, "ractor"), :>=, 0.15e9
    assert_empty edges_of(d, receiver["seq"]), "cross-Ractor waits name no releaser"
  end
end

# frozen_string_literal: true

# A timeline larger than one sorting slice (32,768 intervals): stop and
# snapshot read the encoded rings a slice at a time, sort each slice into an
# encoded run and merge the runs; the report keeps the timeline encoded and
# save streams it. Every view must stay what it was: sorted, disjoint per
# thread, covering each thread's totals, the same JSON bytes.
require "stringio"
require "tmpdir"
require "zlib"
require_relative "contention_helper"

class TestTimelineMemory < Test::Unit::TestCase
  include ContentionHelper

  SLICE = 32_768

  def teardown
    Rperf.stop if Rperf.running?
  end

  # Pairs of threads ping-ponging 1-byte messages: several GVL hand-offs
  # per round trip, so a few thousand round trips give 100,000s of intervals.
  def ping_pong(round_trips, pairs: 2)
    Array.new(pairs) do
      ping_r, ping_w = IO.pipe
      pong_r, pong_w = IO.pipe
      [Thread.new do
        round_trips.times do
          ping_w.write("x")
          pong_r.read(1)
        end
        ping_w.close
      end,
       Thread.new do
         pong_w.write("y") while ping_r.read(1)
         pong_w.close
       end]
    end.flatten.each(&:join)
  end

  def assert_report_order(intervals)
    previous = nil
    intervals.each do |iv|
      key = [iv[2], iv[0]]
      assert_operator (previous <=> key), :<=, 0, "#{key} after #{previous}" if previous
      previous = key
    end
  end

  def many_intervals_report
    # Enough round trips for three slices, whatever the machine's pace.
    report = nil
    [8_000, 20_000, 50_000].each do |round_trips|
      report = Rperf.contention { ping_pong(round_trips) }
      break if report.to_h["intervals"].size > 2 * SLICE
    end
    report
  end

  def test_a_timeline_of_several_slices_is_exact
    report = many_intervals_report
    intervals = report.to_h["intervals"]
    assert_operator intervals.size, :>, 2 * SLICE, "the merge of several runs is exercised"
    assert_equal 0, report.stats["dropped_intervals"]
    assert_report_order(intervals)
    assert_intervals_disjoint(report)
    assert_conservation(report)
    per_thread = report.intervals.group_by(&:thread)
    report.threads.each do |t|
      covered = per_thread.fetch(t.seq, []).sum(&:duration_ns)
      assert_in_delta t.accounted_ns, covered, t.accounted_ns * 0.02 + 200_000, "thread #{t.seq} #{t.name}"
    end
    # Kept encoded: far less than the 40 bytes of a decoded record.
    assert_operator intervals.encoded_bytesize, :<, intervals.size * 16
    # Read in order, the sorted runs are merged as they are read; the first
    # read at an index merges them once into one list, which every read
    # after it uses: the same rows, the same text.
    streamed = intervals.to_a
    streamed_json = intervals.to_json
    causes = report.to_h["interval_causes"].to_a
    assert_equal streamed.last, intervals.at(-1)
    assert_equal streamed[SLICE + 3], intervals.at(SLICE + 3)
    assert_equal streamed[0], intervals[0]
    assert_equal streamed, intervals.to_a
    assert_equal streamed_json, intervals.to_json
    assert_equal causes, report.to_h["interval_causes"].to_a
    assert_equal causes[causes.size / 2], report.to_h["interval_causes"].at(causes.size / 2)
  end

  # The list is frozen and shareable: Ractors reading it at an index at
  # once (their threads run in parallel) merge its runs once and all read
  # the same rows as the main Ractor streams.
  def test_ractors_share_the_lazily_merged_timeline
    report = many_intervals_report
    intervals = report.to_h["intervals"]
    assert Ractor.shareable?(intervals)
    experimental = Warning[:experimental]
    Warning[:experimental] = false
    readers = 3.times.map do |k|
      Ractor.new(intervals, k) { |list, i| [list.at(-1 - i), list.at(i * 1000), list.at(SLICE + i)] }
    end
    got = readers.map(&:take)
    Warning[:experimental] = experimental
    rows = intervals.to_a
    got.each_with_index do |(last, early, past_slice), i|
      assert_equal rows[-1 - i], last
      assert_equal rows[i * 1000], early
      assert_equal rows[SLICE + i], past_slice
    end
  end

  def test_a_snapshot_leaves_the_rings_to_the_final_report
    Rperf.start(frequency: 100, mode: :wall, timeline: true)
    ping_pong(8_000)
    snap = Rperf.snapshot
    ping_pong(500)
    final = Rperf.stop
    closed = snap.to_h["intervals"].reject { |iv| iv[3] >= snap.duration_ns }
    assert_operator closed.size, :>, SLICE
    all = final.to_h["intervals"].to_a
    assert_report_order(all)
    missing = closed.to_a - all
    assert_empty missing.first(3), "#{missing.size} of the snapshot's closed intervals are not in the final report"
  end

  # A short run costs little memory from start to stop, whatever the heap
  # held before: the wait-edge table (6 MiB at the default max_edges) once
  # became resident at start when calloc recycled freed heap memory, at
  # stop when its clearing memset touched every page, and at every cut when
  # it read every bucket (a read fault makes a page resident on kernels
  # that map no shared zero page; test_wait_edges.c counts the pages read
  # on any kernel). Measured in a fresh
  # process after the bench's warm-up; the peak RSS is restarted before
  # start (/proc/self/clear_refs "5", Linux 4.0 and later).
  def test_a_short_run_costs_little_memory
    omit "needs /proc/self/clear_refs" unless File.writable?("/proc/self/clear_refs")
    workloads = File.expand_path("../../bench/workloads", __dir__)
    code = <<~RUBY
      # The bench's warm-up: it leaves the heap in the state that made
      # calloc zero the whole table (glibc).
      require "#{workloads}/cpu_threads"
      require "#{workloads}/gvl_switch"
      status = ->(key) { File.read("/proc/self/status")[/^\#{key}:\\s+(\\d+)/, 1].to_i / 1024.0 }
      BenchWorkloads.gvl_switch(2)
      BenchWorkloads.cpu_threads(2)
      require "rperf"
      GC.start
      before = status.("VmRSS")
      File.write("/proc/self/clear_refs", "5")
      Rperf.start
      BenchWorkloads.cpu_threads(2)
      Rperf.stop
      puts status.("VmHWM") - before
    RUBY
    includes = $LOAD_PATH.grep_v(%r{/gems/|/lib/ruby/}).flat_map { |d| ["-I", d] }
    # Under AddressSanitizer freed blocks stay in its quarantine, resident,
    # so the peak would count every block stop freed on its way (1.5 MiB of
    # live memory read as 3.0 MiB): the child runs without a quarantine.
    env = ENV["ASAN_OPTIONS"] ? { "ASAN_OPTIONS" => "#{ENV["ASAN_OPTIONS"]}:quarantine_size_mb=0" } : {}
    out = Dir.mktmpdir do |dir|
      File.write(File.join(dir, "short_run.rb"), code)
      IO.popen(env, [RbConfig.ruby, *includes, File.join(dir, "short_run.rb")], err: %i[child out], &:read)
    end
    assert_predicate $?, :success?, out
    grown = Float(out.lines.last)
    assert_operator grown, :<, 3.0, "start..stop raised the peak RSS by #{grown.round(1)} MiB"
  end

  def test_save_streams_the_same_bytes_as_to_json
    report = Rperf.contention do
      Rperf.label(k: "nul \u0000 quote \" end") { ping_pong(3_000) }
    end
    assert_operator report.to_h["intervals"].size, :>, SLICE / 4
    Dir.mktmpdir do |dir|
      json = File.join(dir, "r.json")
      gz = File.join(dir, "r.json.gz")
      report.save(json)
      report.save(gz)
      # Streamed: saving did not build (and keep) the whole text.
      refute report.instance_variable_get(:@cache).key?(:json)
      text = File.binread(json)
      assert_equal report.to_json, text
      assert_equal text, Zlib.gunzip(File.binread(gz))
      # and it loads again, the label's NUL included (the analysis module
      # reads it too: the summary renders).
      loaded = Rperf::Report.load(json)
      assert_equal report.to_h["label_sets"], loaded.to_h["label_sets"]
      assert_match(/k=nul/, loaded.to_summary)
    end
    io = StringIO.new(+"")
    intervals = report.to_h["intervals"]
    intervals.write_json(io)
    assert_equal intervals.to_json, io.string
    # The C number formatting against Ruby's, over every tuple.
    assert_equal JSON.generate(intervals.to_a), intervals.to_json
    # The blocked intervals' causes: a second view of the same records,
    # streamed into the saved text above and written the same way.
    causes = report.to_h["interval_causes"]
    assert_kind_of Rperf::Contention::IntervalCauses, causes
    assert_operator causes.size, :>, 0
    assert_equal causes.size, causes.to_a.size
    blocked = intervals.select { |iv| iv[1] == 2 }.to_h { |iv| [[iv[0], iv[2]], iv] }
    causes.each { |seq, start, *| assert blocked.key?([seq, start]), "a cause row names a blocked interval" }
    assert_equal causes.to_a.last, causes.at(-1)
    io = StringIO.new(+"")
    causes.write_json(io)
    assert_equal JSON.generate(causes.to_a), io.string
    assert_equal io.string, causes.to_json
    # Both lists from one read of the records (the causes' text waits in a
    # temporary file): to a File (copied by the kernel) and to any other IO
    # (read back); another list's causes are written by their own
    # write_json.
    both = "#{intervals.to_json},\"between\":#{causes.to_json}"
    io = StringIO.new(+"")
    intervals.write_json_with_causes(io, ",\"between\":", causes)
    assert_equal both, io.string
    Dir.mktmpdir do |dir|
      path = File.join(dir, "both.json")
      File.open(path, "wb") do |f|
        f.write("{")
        intervals.write_json_with_causes(f, ",\"between\":", causes)
        f.write("}")
      end
      assert_equal "{#{both}}", File.binread(path)
      assert_equal [".", "..", "both.json"].sort, Dir.entries(dir).sort, "no temporary file left behind"
    end
    other = Object.new
    def other.write_json(io) = io.write("[7]")
    io = StringIO.new(+"")
    intervals.write_json_with_causes(io, ":", other)
    assert_equal "#{intervals.to_json}:[7]", io.string
  end
end

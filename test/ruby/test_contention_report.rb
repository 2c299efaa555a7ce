# frozen_string_literal: true

# The report document: shape, round trip, renderings, bad input.
require "tmpdir"
require_relative "contention_helper"

class TestContentionReport < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  def report
    @report ||= Rperf.contention do
      Rperf.label(kind: "demo") { cpu_threads(2, 0.05).each(&:join) }
      Thread.new { sleep 0.01 }.join
    end
  end

  def test_shape_follows_report_format_v1
    h = report.to_h
    %w[format version minor meta stats ractors threads label_sets label_totals frames stacks samples
       intervals edges blame].each { |k| assert h.key?(k), "missing #{k}" }
    %w[tool tool_version ruby_version pid program mode frequency start_time_ns start_monotonic_ns
       duration_ns sequence].each { |k| assert h["meta"].key?(k), "meta.#{k}" }
    %w[trigger_count sampling_count sampling_time_ns hook_events hook_time_ns dropped_samples
       dropped_aggregation dropped_intervals dropped_edges dropped_threads dropped_label_sets].each do |k|
      assert_kind_of Integer, h["stats"][k], "stats.#{k}"
      assert_operator h["stats"][k], :>=, 0
    end
    assert_equal [["<GVL>", "[GVL blocked]"], ["<GVL>", "[GVL wait]"], ["<GC>", "[GC marking]"],
                  ["<GC>", "[GC sweeping]"]], h["frames"].first(4)
    assert_equal h["threads"].map { |t| t["seq"] }.sort, h["threads"].map { |t| t["seq"] }
    assert_equal h["intervals"].map { |iv| iv[2] }.sort, h["intervals"].map { |iv| iv[2] }
    assert_operator h["stats"]["hook_events"], :>, 0
    assert_equal Process.pid, h["meta"]["pid"]
    assert_equal 0, h["meta"]["sequence"]
    assert_equal [{ "id" => 0, "labels" => {} }], h["label_sets"].first(1)
  end

  # The timeline of a report built in this process is kept packed; it must
  # read like the Array of tuples a loaded report has, and write the same JSON.
  def test_packed_timeline_reads_and_writes_like_an_array
    ivs = report.to_h["intervals"]
    tuples = ivs.to_a
    assert_operator tuples.size, :>, 10
    assert_equal tuples.size, ivs.size
    assert_equal tuples.size, ivs.each.size
    assert tuples.all? { |iv| iv.size == 6 && iv.all?(Integer) }
    assert_equal tuples.first, ivs[0]
    assert_equal tuples.last, ivs[-1]
    assert_equal tuples.last, ivs.last
    assert_nil ivs[tuples.size]
    assert_nil ivs[-tuples.size - 1]
    assert_equal tuples[2, 3], ivs[2, 3]
    assert_equal tuples.sort_by { |iv| [iv[2], iv[0]] }, tuples
    assert_equal tuples, JSON.parse(ivs.to_json)
    assert_equal tuples, JSON.parse(JSON.generate("intervals" => ivs))["intervals"]
    assert ivs.frozen?
    assert_raise(TypeError) { Rperf::Contention::Intervals.new } # only the extension makes one
    Dir.mktmpdir do |dir|
      path = File.join(dir, "r.json")
      report.save(path)
      loaded = Rperf::Report.load(path)
      assert_equal tuples, loaded.to_h["intervals"].to_a
      assert ivs == loaded.to_h["intervals"]
      assert_equal File.binread(path), loaded.to_json
    end
  end

  # A loaded report takes its timeline from the analysis module's parse and
  # lets Ruby's parser read the text around it: wherever the array sits and
  # however the text is spaced, the Hash is the one the text holds. Without
  # a timeline the interval causes go too: they name blocked intervals.
  def test_loaded_report_equals_its_text_in_any_layout
    original = JSON.parse(report.to_json)
    reordered = { "intervals" => original["intervals"] }.merge(original.reject { |k, _| k == "intervals" })
    no_timeline = original.reject { |k, _| %w[intervals interval_causes].include?(k) }
    [JSON.pretty_generate(original), JSON.generate(reordered), JSON.generate(no_timeline)]
      .each do |text|
        loaded = Rperf::Report.from_json(text)
        expected = JSON.parse(text)
        expected["intervals"] ||= []
        assert_equal expected["intervals"], loaded.to_h["intervals"].to_a
        assert_equal expected.reject { |k, _| k == "intervals" }, loaded.to_h.reject { |k, _| k == "intervals" }
        assert_equal text, loaded.to_json
        assert_equal Rperf::Report.new(expected).to_summary, loaded.to_summary if Rperf::HAVE_ANALYSIS
      end
    gz = Zlib.gzip(report.to_json)
    assert_equal tuples_of(report), Rperf::Report.from_json(gz).to_h["intervals"].to_a
    e = assert_raise(Rperf::ReportError) { Rperf::Report.from_json("\x1f\x8bnot gzip".b, source: "x") }
    assert_match(/x: not a valid gzip file/, e.message)
  end

  def tuples_of(report) = JSON.parse(report.to_json)["intervals"]

  # A Report is a read-only view: its data is frozen, so the JSON that every
  # rendering and save reuse cannot go stale.
  def test_report_data_is_frozen_and_json_reused
    h = report.to_h
    assert h.frozen?
    assert h["threads"].first.frozen?
    assert_raise(FrozenError) { h["threads"] << {} }
    assert_raise(FrozenError) { h["meta"]["mode"] = "cpu" }
    assert_same report.to_json, report.to_json
    assert_equal JSON.parse(report.to_json), JSON.parse(JSON.generate(h))
    assert_same report.to_h["intervals"], report.to_h["intervals"].dup
    copy = Marshal.load(Marshal.dump(report))
    assert_equal report.to_json, copy.to_json
    assert_equal report.to_h["intervals"].to_a, copy.to_h["intervals"].to_a
    assert_equal report.to_summary, copy.to_summary if Rperf::HAVE_ANALYSIS
  end

  def test_save_load_round_trip_gives_identical_summary
    omit("no analysis module in this build") unless Rperf::HAVE_ANALYSIS
    Dir.mktmpdir do |dir|
      %w[r.json r.json.gz].each do |name|
        path = File.join(dir, name)
        report.save(path)
        loaded = Rperf::Report.load(path)
        assert_equal report.to_summary, loaded.to_summary
        assert_equal report.to_dot, loaded.to_dot
        assert_equal report.to_timeline(width: 60), loaded.to_timeline(width: 60)
      end
    end
  end

  def test_renderings
    omit("no analysis module in this build") unless Rperf::HAVE_ANALYSIS
    assert_match(/GVL wait/, report.to_summary)
    assert_match(/digraph/, report.to_dot)
    assert_match(/<svg/, report.to_svg)
    assert_kind_of Hash, JSON.parse(report.to_perfetto)
  end

  def test_bad_reports_raise_clear_errors
    Dir.mktmpdir do |dir|
      bad = File.join(dir, "bad.json")
      File.write(bad, "{ not json")
      e = assert_raise(Rperf::ReportError) { Rperf::Report.load(bad) }
      assert_match(/bad\.json/, e.message)

      File.write(bad, JSON.generate(report.to_h.merge("version" => 7)))
      e = assert_raise(Rperf::ReportError) { Rperf::Report.load(bad) }
      assert_match(/version/, e.message)

      broken = report.to_h.merge("threads" => [report.to_h["threads"].first.merge("gvl_wait_ns" => -5)])
      File.write(bad, JSON.generate(broken))
      if Rperf::HAVE_ANALYSIS
        e = assert_raise(Rperf::ReportError) { Rperf::Report.load(bad) }
        assert_match(/gvl_wait_ns/, e.message)
      end

      e = assert_raise(Rperf::ReportError) { Rperf::Report.load(File.join(dir, "missing.json")) }
      assert_match(/missing\.json/, e.message)
      gz = File.join(dir, "bad.json.gz")
      File.binwrite(gz, "\x1f\x8b\x08garbage".b)
      assert_raise(Rperf::ReportError) { Rperf::Report.load(gz) }
    end
  end
end

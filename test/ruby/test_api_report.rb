# frozen_string_literal: true

# The one report object: every entry point returns a frozen Rperf::Report;
# its rows are frozen Data objects made from the document; its views take
# the CLI's options, checked the same way; save picks the format from the
# file name; Report.load bounds what a gzip report may inflate to.
require "tmpdir"
require_relative "contention_helper"

class TestApiReport < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  def report
    @report ||= Rperf.contention do
      Rperf.label(role: "worker") { cpu_threads(2, 0.05).each(&:join) }
      Thread.new { Thread.current.name = "napper"; sleep 0.01 }.join
    end
  end

  def assert_report(value, what)
    assert_instance_of Rperf::Report, value, what
    assert value.frozen?, "#{what} is frozen"
    assert value.to_h.frozen?, "#{what}: its document is frozen"
  end

  def test_every_entry_point_returns_the_same_frozen_report_class
    assert_same Rperf::Report, Rperf::Contention::Report
    assert_report(report, "Rperf.contention { }")
    session = Rperf.contention
    assert_report(session.snapshot, "Session#snapshot")
    assert_report(Rperf.snapshot, "Rperf.snapshot")
    assert_report(Rperf.contention_stop, "Rperf.contention_stop")
    Rperf.start(mode: :wall)
    assert_report(Rperf.stop, "Rperf.stop")
    assert_report(Rperf.start(mode: :cpu) { burn_work(0.01) }, "Rperf.start { }")
    Dir.mktmpdir do |dir|
      path = report.save(File.join(dir, "r.json"))
      assert_report(Rperf::Report.load(path), "Report.load")
    end
    assert_report(Marshal.load(Marshal.dump(report)), "a Marshal copy")
    assert_raise(FrozenError) { report.instance_variable_set(:@doc, {}) }
  end

  def test_rows_are_frozen_data_made_from_the_document
    doc = report.to_h
    {
      threads: [Rperf::Report::ThreadRow, doc["threads"]],
      edges: [Rperf::Report::EdgeRow, doc["edges"]],
      ractors: [Rperf::Report::RactorRow, doc["ractors"]],
      label_sets: [Rperf::Report::LabelSetRow, doc["label_sets"]],
      label_totals: [Rperf::Report::LabelTotalRow, doc["label_totals"]]
    }.each do |table, (klass, source)|
      rows = report.public_send(table)
      refute_empty rows, "#{table}: this workload fills it"
      assert_equal source.size, rows.size, table.to_s
      rows.zip(source).each do |row, hash|
        assert_kind_of Data, row
        assert_instance_of klass, row
        assert row.frozen?
        # Every member is the document's value under the same name.
        assert_equal klass.members.to_h { |m| [m, hash[m.name]] }, row.to_h, table.to_s
      end
    end
    worker = report.labels.find { |l| l.labels == { "role" => "worker" } }
    assert_instance_of Rperf::Report::LabelRow, worker
    assert_operator worker.running_ns, :>, 0
    assert_equal report.label_totals.select { |r| r.label_set == worker.id }.sum(&:total_ns), worker.total_ns
  end

  def test_intervals_are_rows_over_the_packed_timeline
    tuples = report.to_h["intervals"].to_a
    rows = report.intervals
    assert_operator rows.size, :>, 10
    assert_equal tuples.size, rows.to_a.size
    assert_equal tuples, rows.map { |iv| iv.to_h.values }
    assert_instance_of Rperf::Report::IntervalRow, rows[0]
    assert_equal rows.to_a.last, rows.last
    assert_nil rows[tuples.size]
    assert_equal Rperf::Report::STATE_NAMES[rows[0].state], rows[0].state_name
    assert rows.frozen?
  end

  def test_views_render_with_the_new_names
    omit("no analysis module in this build") unless Rperf::HAVE_ANALYSIS
    assert_match(/^Threads/, report.to_summary)
    assert_equal Encoding::UTF_8, report.to_summary.encoding
    assert_match(/napper/, report.to_timeline(width: 40))
    assert_match(/\A(strict )?digraph/, report.to_dot(by: :label))
    assert_match(/<svg/, report.to_svg)
    assert_equal "\x89PNG".b, report.to_png.byteslice(0, 4)
    assert_kind_of Array, JSON.parse(report.to_perfetto)["traceEvents"]
    assert_equal "rperf-gvl-summary", JSON.parse(report.to_summary_json)["format"]
    assert_equal report.to_h, JSON.parse(report.to_json)
  end

  def test_old_view_names_are_deprecated_aliases
    omit("no analysis module in this build") unless Rperf::HAVE_ANALYSIS
    deprecated = Warning[:deprecated]
    Warning[:deprecated] = true
    { summary: :to_summary, timeline: :to_timeline, perfetto: :to_perfetto, summary_json: :to_summary_json }
      .each do |old, new|
        _, warned = capture_output { assert_equal report.public_send(new), report.public_send(old) }
        assert_match(/##{old} is deprecated; use ##{new}/, warned)
      end
  ensure
    Warning[:deprecated] = deprecated
  end

  # Every rendering option is checked as the CLI checks it, naming the option.
  def test_rendering_options_are_validated_like_the_cli
    omit("no analysis module in this build") unless Rperf::HAVE_ANALYSIS
    {
      { width: 0 } => /width: 0 is invalid/, { width: 10_001 } => /width: 10001/, { width: "80" } => /width: "80"/,
      { by: "x" } => /by: "x" is invalid; expected one of thread, label, ractor/,
      { min_share: 2 } => /min_share: 2 is invalid/, { min_share: -0.1 } => /min_share: -0.1/,
      { color: "x" } => /color: "x" is invalid/, { ascii: 1 } => /ascii: 1 is invalid/,
      { top: 0 } => /top: 0 is invalid/, { ractor: 0 } => /ractor: 0 is invalid/,
      { from_ns: -1 } => /from_ns: -1 is invalid/, { to_ns: 0 } => /to_ns: 0 is invalid/,
      { from_ns: 10, to_ns: 5 } => /to_ns: 5 is invalid; it must be after from_ns/,
      { thread: 0 } => /thread: 0 is invalid/, { labels: ["novalue"] } => /labels: \["novalue"\] is invalid/,
      { labels: "a=b" } => /labels: "a=b" is invalid/, { colour: true } => /unknown rendering option :colour/
    }.each do |opts, message|
      e = assert_raise(ArgumentError, opts.inspect) { report.to_summary(**opts) }
      assert_match message, e.message
    end
    # The accepted forms render.
    assert_match(/Threads/, report.to_summary(width: 1, top: 3, color: :never, thread: 1, ractor: 1,
                                              labels: { role: "worker" }))
    assert_match(/\e\[/, report.to_summary(color: true))
    refute_match(/\e\[/, report.to_summary(color: "never"))
    assert_match(/digraph/, report.to_dot(by: "ractor", min_share: 0.5))
    assert_kind_of String, report.to_timeline(from_ns: 0, to_ns: report.duration_ns, ascii: true)
  end

  def test_save_picks_the_format_from_the_name
    Dir.mktmpdir do |dir|
      path = ->(name) { File.join(dir, name) }
      assert_equal report.to_h, JSON.parse(File.read(report.save(path["r.json"])))
      %w[r.json.gz r.gz].each do |name|
        assert_equal "\x1f\x8b".b, File.binread(report.save(path[name]), 2)
        assert_equal report.to_h["threads"], Rperf::Report.load(path[name]).to_h["threads"]
      end
      if Rperf::HAVE_ANALYSIS
        assert_equal report.to_summary, File.read(report.save(path["r.txt"]))
        assert_equal report.to_dot, File.read(report.save(path["r.dot"]))
        assert_match(/<svg/, File.read(report.save(path["r.svg"])))
        assert_equal "\x89PNG".b, File.binread(report.save(path["r.png"]), 4)
        %w[r.perfetto.json r.trace.json].each do |name|
          assert_equal report.to_perfetto, File.read(report.save(path[name]))
        end
        assert_equal report.to_summary(top: 2), File.read(report.save(path["t.txt"], top: 2))
        assert_equal report.to_h, JSON.parse(File.read(report.save(path["plain"], format: :json)))
        assert_equal report.to_summary, File.read(report.save(path["text"], format: :text))
      end
      e = assert_raise(ArgumentError) { report.save(path["r.bogus"]) }
      assert_match(/r\.bogus: unknown report file name; it must end in one of .*\.json\.gz.*\.txt/, e.message)
      e = assert_raise(ArgumentError) { report.save(path["r.json"], format: :yaml) }
      assert_match(/format: :yaml is invalid/, e.message)
      refute(Dir.children(dir).any? { |n| n.include?(".tmp") }, "no temporary file is left behind")
    end
  end

  # The views other parts of the project add: saved by name once the
  # analysis module knows them, refused with the known views until then.
  def test_save_of_views_added_by_the_analysis_module
    omit("no analysis module in this build") unless Rperf::HAVE_ANALYSIS
    Dir.mktmpdir do |dir|
      { "r.pb.gz" => :to_pprof, "r.collapsed" => :to_collapsed, "r.folded" => :to_collapsed,
        "r.speedscope.json" => :to_speedscope, "r.html" => :to_html }.each do |name, view|
        expected = begin
          report.public_send(view)
        rescue ArgumentError => e
          assert_match(/unknown view/, e.message)
          assert_raise(ArgumentError) { report.save(File.join(dir, name)) }
          next
        end
        assert_equal expected.b, File.binread(report.save(File.join(dir, name))), name
      end
    end
  end

  # A FIFO (like a device) is written through, never replaced by a file.
  # Opened read-write here, it takes the small report without a reader
  # thread, and a replaced FIFO fails the read instead of hanging.
  def test_save_writes_through_special_files
    small = Rperf.contention(timeline: false) { sleep 0.001 }
    assert_operator small.to_json.bytesize, :<, 32_768, "fits in the pipe buffer"
    Dir.mktmpdir do |dir|
      fifo = File.join(dir, "pipe")
      File.mkfifo(fifo)
      File.open(fifo, File::RDWR) do |io|
        small.save(fifo, format: :json)
        assert File.pipe?(fifo), "the FIFO is still a FIFO"
        assert_equal small.to_json, io.read_nonblock(1 << 20)
      end
    end
  end

  # Names of up to 255 bytes (NAME_MAX) are valid; the temporary file save
  # writes beside them is cut to fit, between characters.
  def test_save_to_the_longest_names
    small = Rperf.contention(timeline: false) { sleep 0.001 }
    Dir.mktmpdir do |dir|
      ["n" * 250 + ".json", "\u00e9" * 123 + ".json.gz", "\u65e5" * 81 + ".svg"].each do |name|
        path = File.join(dir, name)
        assert_operator name.bytesize, :>=, 245
        small.save(path)
        small.save(path) # and once more, replacing it
        assert_operator File.size(path), :>, 0, name
      end
      assert_equal 3, Dir.children(dir).size, "no temporary file is left"
    end
  end

  def test_load_bounds_and_checks_gzip
    json = report.to_json
    Dir.mktmpdir do |dir|
      gz = File.join(dir, "r.json.gz")
      File.binwrite(gz, Zlib.gzip(json))
      assert_equal report.to_h["threads"], Rperf::Report.load(gz, max_bytes: json.bytesize).to_h["threads"]
      e = assert_raise(Rperf::ReportError) { Rperf::Report.load(gz, max_bytes: json.bytesize - 1) }
      assert_match(/r\.json\.gz: gzip data inflates beyond #{json.bytesize - 1} bytes/, e.message)

      # A bomb: 64 MB of zeros in well under 100 KB, refused once the
      # output passes the cap.
      bomb = File.join(dir, "bomb.gz")
      File.binwrite(bomb, Zlib.gzip("\0" * (64 << 20), level: 9))
      assert_operator File.size(bomb), :<, 100_000
      e = assert_raise(Rperf::ReportError) { Rperf::Report.load(bomb, max_bytes: 1 << 20) }
      assert_match(/inflates beyond 1048576 bytes/, e.message)

      half = json.bytesize / 2
      File.binwrite(gz, Zlib.gzip(json.byteslice(0, half)) + Zlib.gzip(json.byteslice(half..)))
      assert_equal report.to_h["threads"], Rperf::Report.load(gz).to_h["threads"], "concatenated gzip members"

      File.binwrite(gz, Zlib.gzip(json) + "garbage")
      e = assert_raise(Rperf::ReportError) { Rperf::Report.load(gz) }
      assert_match(/7 bytes of trailing data after the gzip stream/, e.message)

      full = Zlib.gzip(json)
      File.binwrite(gz, full.byteslice(0, full.bytesize - 10))
      e = assert_raise(Rperf::ReportError) { Rperf::Report.load(gz) }
      assert_match(/r\.json\.gz: truncated gzip data|not a valid gzip file/, e.message)

      e = assert_raise(ArgumentError) { Rperf::Report.load(gz, max_bytes: 0) }
      assert_match(/max_bytes: 0 is invalid/, e.message)
    end
  end

  # Label keys and values that are not valid UTF-8 are scrubbed where they
  # enter, so the report stays writable in every form.
  def test_labels_are_made_valid_utf8
    report = Rperf.contention do
      Rperf.label("k\xE9y".b => "caf\xE9".b, latin: "caf\u00e9".encode("ISO-8859-1")) { sleep 0.005 }
    end
    labels = report.label_sets.map(&:labels).find { |l| l.key?("latin") }
    assert_equal({ "k\uFFFDy" => "caf\uFFFD", "latin" => "caf\u00e9" }, labels)
    assert JSON.parse(report.to_json)
    Dir.mktmpdir do |dir|
      path = report.save(File.join(dir, "r.json.gz"))
      assert_equal labels, Rperf::Report.load(path).label_sets.map(&:labels).find { |l| l.key?("latin") }
    end
    assert_equal report.to_json, Marshal.load(Marshal.dump(report)).to_json
    assert_match(/caf\uFFFD/, report.to_summary) if Rperf::HAVE_ANALYSIS
  end
end

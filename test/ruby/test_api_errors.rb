# frozen_string_literal: true

# Every error path documented in docs/contention.md ("Errors"), provoked:
# the Rperf::Error subclasses and ArgumentError naming the argument.
# (UnsupportedError is provoked by test/variants against builds without
# the sampler or the analysis module.)
require "tmpdir"
require "rbconfig"
require_relative "contention_helper"

class TestApiErrors < Test::Unit::TestCase
  include ContentionHelper

  def teardown
    Rperf.stop if Rperf.running?
  end

  def test_error_classes_are_rperf_errors
    %w[StateError ResourceError ReportError RenderError UnsupportedError].each do |name|
      klass = Rperf.const_get(name)
      assert_operator klass, :<, Rperf::Error, name
    end
    assert_operator Rperf::Error, :<, StandardError
  end

  def test_state_errors
    e = assert_raise(Rperf::StateError) { Rperf.contention_stop }
    assert_match(/no contention profile is running/, e.message)
    session = Rperf.contention
    e = assert_raise(Rperf::StateError) { Rperf.start }
    assert_match(/already running/, e.message)
    session.stop
    e = assert_raise(Rperf::StateError) { session.snapshot }
    assert_match(/no longer running/, e.message)
    Rperf.start(mode: :wall, defer: true)
    Rperf.profile { burn_work(0.001) }
    e = assert_raise(Rperf::StateError) { Rperf.__send__(:_c_profile_dec) }
    assert_match(/unbalanced profile/, e.message)
  end

  # start, stop and snapshot belong to the main Ractor; stop used to skip
  # the check through a public stop_report.
  def test_calls_from_another_ractor_are_state_errors
    Rperf.start(mode: :wall)
    out = run_in_ractor(<<~RUBY)
      %i[stop snapshot].map do |call|
        Rperf.public_send(call)
        "\#{call}: no error"
      rescue Rperf::StateError => e
        e.message
      end
    RUBY
    assert_equal ["rperf: stop must be called from the main Ractor",
                  "rperf: snapshot must be called from the main Ractor"], out
    assert Rperf.running?, "the profile is still running"
    refute_respond_to Rperf, :stop_report
    refute_respond_to Rperf, :snapshot_report
    refute_respond_to Rperf, :label_set
  end

  def run_in_ractor(code)
    experimental = Warning[:experimental]
    Warning[:experimental] = false
    Ractor.new(code) { |src| eval(src) }.take # rubocop:disable Security/Eval -- test code
  ensure
    Warning[:experimental] = experimental
  end

  # A failed output write loses nothing: stop warns and returns the report.
  def test_output_that_cannot_be_written_keeps_the_report
    Dir.mktmpdir do |dir|
      path = File.join(dir, "no", "such", "dir", "r.json")
      report = nil
      _, err = capture_output { report = Rperf.start(mode: :wall, output: path) { sleep 0.001 } }
      assert_instance_of Rperf::Report, report
      assert_match(%r{rperf: cannot write the profile to ".*r\.json": rperf: cannot write /.*/dir/r\.json: No such file or directory}, err)
      refute File.exist?(path)
    end
  end

  # save fails as a RenderError naming the file (the system's error is its
  # cause) and leaves what was there; a name of 255 bytes, the most a
  # directory entry holds, is written (its temporary name fits too).
  def test_save_errors_are_render_errors
    report = Rperf.contention { sleep 0.001 }
    Dir.mktmpdir do |dir|
      e = assert_raise(Rperf::RenderError) { report.save(File.join(dir, "no", "r.json")) }
      assert_match(%r{\Arperf: cannot write /.*/no/r\.json: No such file or directory\z}, e.message)
      assert_kind_of Errno::ENOENT, e.cause
      kept = File.join(dir, "kept.json")
      File.write(kept, "before")
      File.chmod(0o500, dir)
      unless File.writable?(dir) # root writes anyway
        assert_raise(Rperf::RenderError) { report.save(kept) }
        assert_equal "before", File.read(kept)
      end
      File.chmod(0o700, dir)
      long = File.join(dir, "#{"n" * 250}.json")
      report.save(long)
      assert_equal report.to_h["meta"]["pid"], Rperf::Report.load(long).to_h["meta"]["pid"]
      assert_equal %w[kept.json] + [File.basename(long)], Dir.children(dir).sort
      e = assert_raise(ArgumentError) { report.save("x\0y.json") }
      assert_match(/"x\\u0000y\.json": a file name cannot contain a NUL byte/, e.message)
    end
  end

  def test_report_errors
    Dir.mktmpdir do |dir|
      path = File.join(dir, "r.json")
      {
        "{ not json" => /r\.json: (1:3: expected a string key|invalid JSON)/,
        '{"format":"other"}' => /r\.json: .*format/,
        JSON.generate(Rperf.contention { sleep 0.001 }.to_h.merge("version" => 7)) => /version/,
        "\x1f\x8b\x08garbage".b => /r\.json: .*gzip/
      }.each do |text, message|
        File.binwrite(path, text)
        e = assert_raise(Rperf::ReportError, text[0, 20]) { Rperf::Report.load(path) }
        assert_match message, e.message
      end
      e = assert_raise(Rperf::ReportError) { Rperf::Report.load(File.join(dir, "none.json")) }
      assert_match(/none\.json: cannot read/, e.message)
      e = assert_raise(Rperf::ReportError) { Rperf::Report.new({ "format" => "rperf-gvl-report", "version" => 1 }) }
      assert_match(/missing key "meta"/, e.message)
    end
  end

  # Graphviz without its plugins cannot lay the graph out: a RenderError
  # naming Graphviz (in a child: the Graphviz context lives for the process).
  def test_render_error_when_graphviz_fails
    omit("no analysis module in this build") unless Rperf::HAVE_ANALYSIS
    Dir.mktmpdir do |dir|
      code = <<~RUBY
        require "rperf"
        report = Rperf.contention { sleep 0.001 }
        begin
          report.to_svg
          puts "no error"
        rescue Rperf::Error => e
          puts "\#{e.class}: \#{e.message}"
        end
      RUBY
      includes = $LOAD_PATH.grep_v(%r{/gems/|/lib/ruby/}).flat_map { |d| ["-I", d] }
      out = IO.popen({ "GVBINDIR" => dir }, [RbConfig.ruby, *includes, "-e", code], err: %i[child out], &:read)
      assert_match(/\ARperf::RenderError: Graphviz dot layout failed/, out)
    end
  end

  def test_argument_errors_name_the_argument
    {
      -> { Rperf.start(max_threads: 0) } => /max_threads: 0 is invalid/,
      -> { Rperf.start(max_intervals: -1) } => /max_intervals: -1 is invalid/,
      -> { Rperf.start(min_interval_ns: "1") } => /min_interval_ns: "1" is invalid/,
      -> { Rperf.start(max_edges: 0) } => /max_edges: 0 is invalid/,
      -> { Rperf.start(timeline: "yes") } => /timeline: "yes" is invalid/,
      -> { Rperf.start(output: 42) } => /output: 42 is invalid/,
      -> { Rperf.start(output: "x\0y.json") } => /output: "x\\u0000y\.json" is invalid; a path cannot contain a NUL byte/,
      -> { Rperf.contention { nil }.to_timeline(to_ns: 2**70) } => /to_ns: #{2**70} is invalid; expected an Integer from 1 to/,
      -> { Rperf.contention { nil }.to_summary(ractor: 2**64) } => /ractor: #{2**64} is invalid/,
      -> { Rperf.start(format: :yaml) } => /format: :yaml is invalid/,
      -> { Rperf.start(output: "profile.bogus") } => /profile\.bogus: unknown report file name/,
      -> { Rperf.start(bogus: 1) } => /unknown keyword: :bogus/,
      -> { Rperf.contention(frequency: 0) {} } => /frequency: 0 is invalid/,
      -> { Rperf.label(nil => 1) } => /label key nil is invalid; expected a Symbol or a String/,
      -> { Rperf.label(1 => "x") { nil } } => /label key 1 is invalid/,
      -> { Rperf.profile(Object.new => "x") { nil } } => /label key #<Object.*> is invalid/,
      -> { Rperf.profile } => /needs a block/,
      -> { Rperf.save("r.json", 42) } => /data: expected a Rperf::Report, got Integer/,
      -> { Rperf::Report.from_json("{}", max_bytes: -1) } => /max_bytes: -1 is invalid/
    }.each do |call, message|
      e = assert_raise(ArgumentError, message.source) { call.call }
      assert_match message, e.message
      refute Rperf.running?, "#{message.source}: nothing was started"
    end
  end
end

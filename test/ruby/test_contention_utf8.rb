# frozen_string_literal: true

# Names a program chooses may hold any bytes; the report must still be
# writable. Thread names, $0 and frame paths and labels that are not valid
# UTF-8 are scrubbed where the extension takes them (U+FFFD per invalid
# sequence, docs/report-format.md), text in another encoding is transcoded,
# and valid UTF-8 is kept as it is.
require "json"
require "tmpdir"
require_relative "contention_helper"

class TestContentionUtf8 < Test::Unit::TestCase
  include ContentionHelper

  REPLACEMENT = "\uFFFD"

  def teardown
    Rperf.stop if Rperf.running?
  end

  def named_threads_report
    Rperf.contention do
      names = ["caf\xE9".b, "caf\xE9".dup.force_encoding(Encoding::ISO_8859_1), "café", "ok"]
      names.map { |name| Thread.new { Thread.current.name = name; burn_work(0.02) } }.each(&:join)
    end
  end

  def test_thread_names_are_valid_utf8_and_the_report_writes
    report = named_threads_report
    names = report.to_h["threads"].map { |t| t["name"] }
    names.each do |name|
      assert_equal Encoding::UTF_8, name.encoding, name.inspect
      assert_predicate name, :valid_encoding?, name.inspect
    end
    assert_includes names, "caf#{REPLACEMENT}", "invalid bytes become U+FFFD"
    assert_equal 2, names.count("café"), "ISO-8859-1 is transcoded, UTF-8 kept"
    assert_includes names, "ok"

    json = report.to_json
    assert_includes JSON.parse(json)["threads"].map { |t| t["name"] }, "caf#{REPLACEMENT}"
    Dir.mktmpdir do |dir|
      path = File.join(dir, "r.json")
      report.save(path)
      assert_includes JSON.parse(File.read(path))["threads"].map { |t| t["name"] }, "caf#{REPLACEMENT}"
    end
    assert_equal json, Marshal.load(Marshal.dump(report)).to_json
  end

  def test_program_name_is_valid_utf8
    saved = $0
    begin
      $0 = "prog_\xE9".b
      report = Rperf.contention { burn_work(0.01) }
    ensure
      $0 = saved
    end
    assert_equal "prog_#{REPLACEMENT}", report.meta["program"]
    assert_nothing_raised { report.to_json }
  end

  def test_frames_from_a_non_utf8_path_and_method_name
    omit("no sampler in this build") unless Rperf::HAVE_SAMPLER
    Dir.mktmpdir do |dir|
      path = File.join(dir.b, "lib_\xE9.rb".b)
      File.binwrite(path, "# encoding: binary\nmodule NonUtf8Names\n  " \
                          "def self.spin_\xE9(n) = n.times.sum { |i| i * i }\nend\n".b)
      load path
      name = NonUtf8Names.singleton_methods.grep(/spin_/).first
      report = Rperf.contention(frequency: 1000, mode: :wall) do
        deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 0.3
        NonUtf8Names.public_send(name, 20_000) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
      end
      frames = report.to_h["frames"]
      frames.flatten.each { |text| assert_predicate text, :valid_encoding?, text.inspect }
      ours = frames.select { |file, _| file.end_with?("lib_#{REPLACEMENT}.rb") }
      assert_not_empty ours, "the sampler saw the method in the file with a binary name"
      assert_include ours.map(&:last), "NonUtf8Names.spin_#{REPLACEMENT}"
      assert_include JSON.parse(report.to_json)["frames"], [File.join(dir, "lib_#{REPLACEMENT}.rb"),
                                                            "NonUtf8Names.spin_#{REPLACEMENT}"]
    end
  end
end

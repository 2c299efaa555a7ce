# frozen_string_literal: true

# The profile outputs from Ruby: Report#to_pprof / to_collapsed /
# to_speedscope / to_top, save choosing the format from the file name, and
# Rperf.start(output: "x.pb.gz"). A known workload (one thread computing
# ~300 ms, one sleeping, two contending for the GVL) must show the computing
# function, [GVL blocked] and [GVL wait] in the top view and in go tool
# pprof's top with the weights the report's exact per-thread totals predict.
require_relative "contention_helper"
require "json"
require "stringio"
require "tmpdir"
require "zlib"

class TestProfilesOut < Test::Unit::TestCase
  include ContentionHelper

  # Workload functions with names of their own, found in the profiles.
  def profiles_compute(seconds) = burn_work(seconds)
  def profiles_contend(seconds) = burn_work(seconds)

  def setup
    @dir = Dir.mktmpdir("rperf-profiles")
  end

  def teardown
    FileUtils.rm_rf(@dir)
  end

  def known_workload
    ContentionHelper.iterations_per_second
    # An earlier test's log writer wakes every 50 ms until it has been idle
    # for a second: a thread that runs now and then inside the workload,
    # whose last wait its samples never carry. It ends on its own.
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 5
    sleep 0.05 while Thread.list.any? { |t| t.name == "rperf-log-writer" } &&
                     Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    Rperf.contention(frequency: 1000, mode: :wall) do
      sleeper = Thread.new { Thread.current.name = "sleeper"; sleep 0.45 }
      compute = Thread.new { Thread.current.name = "compute"; profiles_compute(0.3) }
      compute.join
      contenders = 2.times.map do |i|
        Thread.new { Thread.current.name = "contend#{i}"; profiles_contend(0.1) }
      end
      contenders.each(&:join)
      sleeper.join
    end
  end

  # A thread's off-GVL time becomes [GVL blocked]/[GVL wait] weight when it
  # resumes, so a thread that stayed blocked through the whole report (such
  # as a timeout helper thread an earlier test left behind) is left out.
  def exact(report, name, key)
    report.to_h["threads"].select { |t| name.nil? || t["name"] == name }
          .reject { |t| !t["exited"] && t["running_ns"].zero? && t["gvl_wait_ns"].zero? }
          .sum { |t| t[key] }
  end

  # go tool pprof -top in nanoseconds: { name => [flat_ns, cum_ns] }.
  def go_pprof_top(path)
    env = { "HOME" => @dir, "GOCACHE" => File.join(@dir, "gocache"), "GOPROXY" => "off",
            "GOTOOLCHAIN" => "local", "PPROF_TMPDIR" => @dir }
    # -nodefraction=0: keep every node, so the flat column adds up to the total.
    cmd = ["go", "tool", "pprof", "-top", "-unit=ns", "-nodefraction=0", "-nodecount=100000", path]
    out = IO.popen(env, cmd, err: [:child, :out], &:read)
    assert_true $?.success?, "go tool pprof -top failed (golang-go installed?): #{out}"
    out.lines.each_with_object({}) do |line, rows|
      m = line.chomp.match(/\A\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)(?:ns)?\s+\S+%\s+(.+)\z/) or next
      rows[m[3].strip] = [m[1].to_i, m[2].to_i]
    end
  end

  # { name => [self_ns, cum_ns] } from our top view (durations as printed).
  def top_rows(text)
    text.lines.drop(2).each_with_object({}) do |line, rows|
      cells = line.strip.split(/\s{2,}/)
      rows[cells[5]] = [duration_ns(cells[0]), duration_ns(cells[3])]
    end
  end

  def duration_ns(text)
    m = text.match(/\A([\d.]+)(ns|µs|ms|s)\z/) or return 0
    m[1].to_f * { "ns" => 1, "µs" => 1e3, "ms" => 1e6, "s" => 1e9 }.fetch(m[2])
  end

  def test_known_workload_in_top_and_go_pprof
    report = known_workload
    compute_running = exact(report, "compute", "running_ns")
    blocked = exact(report, nil, "blocked_ns")
    wait = exact(report, nil, "gvl_wait_ns")
    assert_operator compute_running, :>, 250_000_000, "the compute thread ran ~300 ms"
    assert_operator wait, :>, 50_000_000, "two contenders waited for each other"
    compute = "TestProfilesOut#profiles_compute"

    ours = top_rows(report.to_top(top: 1000))
    path = report.save(File.join(@dir, "known.pb.gz"))
    theirs = go_pprof_top(path)
    { "our top view" => ours, "go tool pprof -top" => theirs }.each do |who, rows|
      assert rows.key?(compute), "#{who} lists #{compute}: #{rows.keys.first(10)}"
      # The computing thread's samples all sit under its function; its running time is exact.
      assert_in_delta compute_running, rows[compute][1], compute_running * 0.05, "#{who}: #{compute} cum"
      assert_in_delta blocked, rows["[GVL blocked]"][0], blocked * 0.05, "#{who}: [GVL blocked]"
      assert_in_delta wait, rows["[GVL wait]"][0], wait * 0.05, "#{who}: [GVL wait]"
    end
    # Our view prints 3 significant digits; go reads the exact integers we wrote.
    samples_total = report.to_h["samples"].sum { |s| s[1] }
    assert_equal samples_total, theirs.values.sum { |flat, _| flat }
  end

  def test_state_filter_and_thread_filter
    report = known_workload
    assert_equal Encoding::UTF_8, report.to_top.encoding
    wait_rows = top_rows(report.to_top(state: "gvl_wait", top: 1000))
    assert_equal ["[GVL wait]"], wait_rows.select { |_, (flat, _)| flat.positive? }.keys
    compute_top = report.to_top(thread: "compute", state: "running", top: 1000)
    compute_rows = top_rows(compute_top)
    assert compute_rows.key?("TestProfilesOut#profiles_compute"), compute_top
    assert_false compute_rows.key?("TestProfilesOut#profiles_contend"), "only the compute thread"
    assert_raise(ArgumentError) { report.to_top(state: "sleeping") }
  end

  def test_save_picks_the_format_from_the_name
    report = known_workload
    total = report.to_h["samples"].sum { |s| s[1] }

    pprof = report.save(File.join(@dir, "p.pb.gz"))
    assert_equal report.to_pprof, File.binread(pprof)
    assert_equal [0x1f, 0x8b], File.binread(pprof, 2).bytes, "gzip"
    assert_equal total, go_pprof_top(pprof).values.sum { |flat, _| flat }

    %w[p.collapsed p.folded].each do |name|
      lines = File.readlines(report.save(File.join(@dir, name)))
      assert_equal total, lines.sum { |l| l[/ (\d+)$/, 1].to_i }, name
    end
    rooted = report.to_collapsed(thread_root: true, label_root: true).lines
    assert rooted.all? { |l| l.start_with?(/[^;]+ \((#\d+, )?Ractor \d+\);/) }, rooted.first

    doc = JSON.parse(File.read(report.save(File.join(@dir, "p.speedscope.json"))))
    names = doc["profiles"].map { |p| p["name"] }
    assert_include names, "compute (##{report.thread('compute').seq}, Ractor 1)"
    assert_equal total, doc["profiles"].sum { |p| p["weights"].sum }

    json = report.save(File.join(@dir, "r.json.gz"))
    assert_equal report.to_json, Zlib.gunzip(File.binread(json)), "report.json.gz unchanged"
  end

  def test_start_output_writes_pprof
    path = File.join(@dir, "run.pb.gz")
    Rperf.start(output: path, frequency: 1000, mode: :wall)
    Thread.new { Thread.current.name = "compute"; profiles_compute(0.05) }.join
    data = Rperf.stop
    assert_true File.exist?(path)
    rows = go_pprof_top(path)
    assert rows.key?("TestProfilesOut#profiles_compute"), rows.keys.first(10).inspect
    assert_equal data[:report]["samples"].sum { |s| s[1] }, rows.values.sum { |flat, _| flat }
  end

  def test_report_without_samples_writes_an_empty_profile_and_warns
    h = JSON.parse(known_workload.to_json)
    h["samples"] = []
    report = Rperf::Contention::Report.from_json(JSON.generate(h))
    path = File.join(@dir, "empty.pb.gz")
    old_stderr = $stderr
    $stderr = StringIO.new
    begin
      report.save(path)
      warning = $stderr.string
    ensure
      $stderr = old_stderr
    end
    assert_match(/no samples; .*empty\.pb\.gz is an empty profile/, warning)
    assert_equal({}, go_pprof_top(path))
    assert_equal 0, JSON.parse(report.to_speedscope)["profiles"].size
  end

  def test_unwritable_path_leaves_nothing
    report = known_workload
    path = File.join(@dir, "no", "such", "p.pb.gz")
    e = assert_raise(Rperf::RenderError) { report.save(path) }
    assert_kind_of SystemCallError, e.cause
    assert_false File.exist?(path)
  end
end

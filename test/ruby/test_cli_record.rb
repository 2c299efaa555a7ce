# frozen_string_literal: true

# `rperf-gvl record` as users run it: from the build tree with nothing set
# up (it must find lib/ and the extension itself), on a program that starts
# a profile of its own, and with signals sent to record.
require "test/unit"
require "json"
require "open3"
require "rbconfig"
require "timeout"
require "tmpdir"

class TestCliRecord < Test::Unit::TestCase
  # The CLI of the build whose extension this suite loads (build/ext → build/bin).
  CLI = $LOAD_PATH.map { |d| File.expand_path("../bin/rperf-gvl", d) }.find { |f| File.executable?(f) }

  WORK = <<~RUBY
    def work = 2.times.map { |i| Thread.new { Thread.current.name = "w\#{i}"; x = 0; 2_000_000.times { x += 1 } } }.each(&:join)
  RUBY

  def setup
    omit("no rperf-gvl binary next to the extension") unless CLI
  end

  # A clean environment: no RUBYLIB or RUBYOPT pointing at lib/ or the build.
  def clean_env
    { "RUBYLIB" => nil, "RUBYOPT" => nil, "RPERF_GVL_LIBDIR" => nil }
  end

  def record(dir, program, *args)
    Timeout.timeout(120) do
      Open3.capture3(clean_env, CLI, "record", "-o", File.join(dir, "r.json"), *args, "--", RbConfig.ruby, "-e",
                     program, chdir: dir)
    end
  end

  def thread_names(path)
    JSON.parse(File.read(path))["threads"].map { |t| t["name"] }
  end

  def test_record_from_the_build_tree
    Dir.mktmpdir do |dir|
      out, err, status = record(dir, "#{WORK}\nwork")
      assert_true(status.success?, err)
      assert_match(/^Threads/, out)
      assert_match(/report written to/, err)
      assert_include(thread_names(File.join(dir, "r.json")), "w1")
      assert_empty(Dir.children(dir) - ["r.json"], "no temporary file is left")
    end
  end

  # --html: the page of the run's report, checked before the program runs.
  def test_record_writes_the_html_page
    Dir.mktmpdir do |dir|
      page = File.join(dir, "r.html")
      out, err, status = record(dir, "#{WORK}\nwork", "--html", page)
      assert_true(status.success?, err)
      assert_match(/^Threads/, out)
      assert_match(/page written to/, err)
      html = File.read(page)
      assert_match(/<html/i, html)
      assert_include(html, "w1", "the page carries the report's threads")
      assert_empty(Dir.children(dir).sort - ["r.html", "r.json"], "no temporary file is left")

      marker = File.join(dir, "ran")
      _out, err, status = record(dir, "File.write(#{marker.inspect}, 1)", "--html", File.join(dir, "no", "r.html"))
      assert_equal 74, status.exitstatus, err
      assert_false File.exist?(marker), "the program did not run"
    end
  end

  # The program's own profile wins; the whole-program report keeps the run
  # up to the program's call, and says so.
  def test_record_of_a_program_that_profiles_itself
    program = <<~RUBY
      #{WORK}
      work
      require "rperf"
      Rperf.start(frequency: 100)
      work
      data = Rperf.stop
      puts "own profile: \#{data.class}"
      report = Rperf.contention { work }
      puts "own contention: \#{report.class}"
    RUBY
    Dir.mktmpdir do |dir|
      out, err, status = record(dir, program)
      assert_true(status.success?, err)
      assert_match(/own profile: /, out)
      assert_match(/own contention: /, out)
      assert_match(/the program called Rperf\.start; the whole-program profile stopped here/, err)
      assert_not_match(/already running/, err)
      assert_include(thread_names(File.join(dir, "r.json")), "w0")
    end
  end

  # SIGTERM sent to the whole process group reaches the program twice (from
  # the sender and from record): record still waits for the report, which is
  # whole, prints the summary, and exits as the program did (128 + 15).
  def test_sigterm_to_the_process_group
    Dir.mktmpdir do |dir|
      ready = File.join(dir, "ready")
      program = "#{WORK}\nwork\nFile.write(#{ready.dump}, '')\nsleep 20"
      out_r, out_w = IO.pipe
      status = nil
      pid = Process.spawn(clean_env, CLI, "record", "-o", File.join(dir, "r.json.gz"), "--", RbConfig.ruby, "-e",
                          program, chdir: dir, out: out_w, err: out_w, pgroup: true)
      out_w.close
      Timeout.timeout(60) { sleep 0.05 until File.exist?(ready) }
      Process.kill(:TERM, -pid)
      _, status = Timeout.timeout(60) { Process.wait2(pid) }
      output = out_r.read
      assert_equal(143, status.exitstatus, output)
      assert_match(/^Threads/, output)
      require "zlib"
      names = JSON.parse(Zlib.gunzip(File.binread(File.join(dir, "r.json.gz"))))["threads"].map { |t| t["name"] }
      assert_include(names, "w0")
    ensure
      Process.kill(:KILL, -pid) if pid && !status
    end
  end

  # SIGINT sent to record alone reaches the program, which ends as a Ruby
  # program does on Ctrl-C (by SIGINT: 128 + 2), after writing its report.
  def test_sigint_to_record_reaches_the_program
    Dir.mktmpdir do |dir|
      ready = File.join(dir, "ready")
      program = "#{WORK}\nwork\nFile.write(#{ready.dump}, '')\nsleep 20"
      out_r, out_w = IO.pipe
      status = nil
      # record keeps a SIGINT it was started with ignored (nohup stays
      # nohup), and a runner started in the background by a shell has it
      # ignored: here it is caught, which exec turns into the default.
      previous = trap("INT", "DEFAULT")
      begin
        pid = Process.spawn(clean_env, CLI, "record", "-o", File.join(dir, "r.json"), "--", RbConfig.ruby, "-e",
                            program, chdir: dir, out: out_w, err: out_w)
      ensure
        trap("INT", previous)
      end
      out_w.close
      Timeout.timeout(60) { sleep 0.05 until File.exist?(ready) }
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      Process.kill(:INT, pid)
      _, status = Timeout.timeout(60) { Process.wait2(pid) }
      output = out_r.read
      assert_equal(130, status.exitstatus, output)
      assert_operator(Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 15, "the program was not left sleeping")
      assert_match(/^Threads/, output)
      assert_include(thread_names(File.join(dir, "r.json")), "w0")
    ensure
      Process.kill(:KILL, pid) if pid && !status
    end
  end
end

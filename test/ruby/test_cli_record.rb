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

  # A name of up to 255 bytes is valid: the temporary files the report goes
  # through are cut to fit, keeping ".gz" (the report is still gzip).
  def test_record_to_the_longest_name
    Dir.mktmpdir do |dir|
      name = "\u00e9" * 123 + ".json.gz"
      assert_equal 254, name.bytesize
      out, err, status = Timeout.timeout(120) do
        Open3.capture3(clean_env, CLI, "record", "-o", name, "--", RbConfig.ruby, "-e", "#{WORK}\nwork", chdir: dir)
      end
      assert_true(status.success?, err)
      assert_match(/^Threads/, out)
      require "zlib"
      names = JSON.parse(Zlib.gunzip(File.binread(File.join(dir, name))))["threads"].map { |t| t["name"] }
      assert_include(names, "w1")
      assert_equal [name], Dir.children(dir), "no temporary file is left"
    end
  end

  # Standard output and standard error in one log: the summary comes whole,
  # then record's notices, in the order things happened.
  def test_one_log_reads_in_order
    Dir.mktmpdir do |dir|
      log, status = Timeout.timeout(120) do
        Open3.capture2e(clean_env, CLI, "record", "-o", "r.json", "--html", "r.html", "--", RbConfig.ruby, "-e",
                        "#{WORK}\nwork\nputs 'program done'", chdir: dir)
      end
      assert_true(status.success?, log)
      lines = log.lines.map(&:chomp)
      assert_equal ["rperf-gvl: report written to r.json", "rperf-gvl: page written to r.html"], lines.last(2), log
      assert_operator lines.index("program done"), :<, lines.index { |l| l.start_with?("Threads") }, log
    end
  end

  # A full disk, for real (a small tmpfs): the program cannot write its
  # report. record exits 74 naming the output and the reason, and the
  # previous report stays as it was.
  def test_full_disk_exits_74
    omit("mounting a small tmpfs needs root") unless Process.uid.zero?
    Dir.mktmpdir do |dir|
      disk = File.join(dir, "disk")
      Dir.mkdir(disk)
      assert_true(system("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", disk), "mount a 256 KiB tmpfs")
      begin
        output = File.join(disk, "r.json")
        File.write(output, "old report\n")
        filler = File.join(disk, "filler")
        program = "#{WORK}\nwork\nbegin\nFile.open(#{filler.dump}, 'wb') { |f| loop { f.write('x' * 65_536) } }\n" \
                  "rescue Errno::ENOSPC\nend"
        _out, err, status = Timeout.timeout(120) do
          Open3.capture3(clean_env, CLI, "record", "-o", output, "--", RbConfig.ruby, "-e", program, chdir: dir)
        end
        assert_equal(74, status.exitstatus, err)
        assert_match(/^rperf-gvl: #{Regexp.escape(output)}: cannot write the report: No space left on device/, err)
        assert_not_match(/wrote no report/, err)
        assert_equal("old report\n", File.read(output))
        assert_equal(%w[filler r.json], Dir.children(disk).sort, "no temporary file is left")
      ensure
        system("umount", "-l", disk)
      end
    end
  end

  # The status channel is autorecord's: the program's own subprocesses get
  # neither its descriptor nor its variable.
  def test_the_channel_is_not_inherited
    program = <<~'RUBY'
      puts "env: #{ENV.key?("RPERF_GVL_STATUS_FD")}"
      system("sh", "-c", 'for f in /proc/$$/fd/*; do echo "fd: $(readlink "$f")"; done')
    RUBY
    Dir.mktmpdir do |dir|
      out, err, status = record(dir, program)
      assert_true(status.success?, err)
      assert_match(/^env: false$/, out)
      assert_match(/^fd: pipe:/, out, "the subprocess listed its descriptors")
      assert_not_match(/^fd: socket:/, out)
    end
  end

  # A program that is not Ruby writes no report: a note, and its own status.
  def test_not_a_ruby_program
    Dir.mktmpdir do |dir|
      _out, err, status = Timeout.timeout(60) do
        Open3.capture3(clean_env, CLI, "record", "-o", "r.json", "--", "sh", "-c", "exit 0", chdir: dir)
      end
      assert_equal(0, status.exitstatus, err)
      assert_match(/the program wrote no report \(it did not load the profiler: not a Ruby program\?\)/, err)
      assert_empty(Dir.children(dir))
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

  # A program started with SIGHUP ignored (nohup) survives a hangup under
  # record as it does without it: autorecord leaves ignored signals alone.
  def test_nohup_program_survives_a_hangup
    Dir.mktmpdir do |dir|
      pid_file = File.join(dir, "pid")
      go = File.join(dir, "go")
      program = "#{WORK}\nwork\nFile.write(#{pid_file.dump}, Process.pid.to_s)\n" \
                "sleep 0.05 until File.exist?(#{go.dump})\nputs 'survived'"
      out_r, out_w = IO.pipe
      status = nil
      pid = Process.spawn(clean_env, "sh", "-c", 'trap "" HUP; exec "$@"', "sh", CLI, "record", "-o",
                          File.join(dir, "r.json"), "--", RbConfig.ruby, "-e", program, chdir: dir, out: out_w,
                                                                                          err: out_w)
      out_w.close
      Timeout.timeout(60) { sleep 0.05 until File.size?(pid_file) }
      Process.kill(:HUP, Integer(File.read(pid_file)))
      File.write(go, "")
      _, status = Timeout.timeout(60) { Process.wait2(pid) }
      output = out_r.read
      assert_equal(0, status.exitstatus, output)
      assert_match(/^survived/, output)
      assert_match(/^Threads/, output)
    ensure
      Process.kill(:KILL, pid) if pid && !status
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
      pid = Process.spawn(clean_env, CLI, "record", "-o", File.join(dir, "r.json"), "--", RbConfig.ruby, "-e",
                          program, chdir: dir, out: out_w, err: out_w)
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

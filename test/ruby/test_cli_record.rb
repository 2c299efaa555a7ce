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
    capture(clean_env, CLI, "record", "-o", File.join(dir, "r.json"), *args, "--", RbConfig.ruby, "-e", program,
            chdir: dir)
  end

  # Open3.capture3 (capture2e with merge: true) in a process group that is
  # killed when it outlives `timeout`: a hung program fails its test, not
  # the whole suite's time bound (Timeout around capture3 waits for it).
  def capture(*cmd, timeout: 120, merge: false, **opts)
    open = merge ? Open3.method(:popen2e) : Open3.method(:popen3)
    open.call(*cmd, pgroup: true, **opts) do |stdin, *pipes, waiter|
      stdin.close
      readers = pipes.map { |io| Thread.new { io.read } }
      unless waiter.join(timeout)
        begin
          Process.kill(:KILL, -waiter.pid)
        rescue SystemCallError
          nil
        end
        flunk("#{cmd.grep(String).first(3).join(' ')} ... did not end within #{timeout} s")
      end
      [*readers.map(&:value), waiter.value]
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

  # The whole process tree: each forked child follows the profile and
  # writes its own report, which record puts beside the output with the
  # child's pid in its name and names on stderr.
  def test_record_of_a_forking_program_reports_every_child
    Dir.mktmpdir do |dir|
      program = "#{WORK}\npids = 2.times.map { fork { work } }; pids.each { |p| Process.wait(p) }; puts pids.join(' ')"
      out, err, status = record(dir, program)
      assert_true(status.success?, err)
      pids = out.lines.first.split.map { |p| Integer(p) }
      assert_equal 2, pids.size
      assert_equal(["r.json", *pids.map { |p| "r.#{p}.json" }].sort, Dir.children(dir).sort)
      pids.each do |pid|
        report = JSON.parse(File.read(File.join(dir, "r.#{pid}.json")))
        assert_equal pid, report["meta"]["pid"]
        assert_equal %w[w0 w1], report["threads"].map { |t| t["name"] }.reject(&:empty?).sort
        assert_match(/report of forked process #{pid} written to .*r\.#{pid}\.json \(3 threads/, err)
      end
      refute_includes thread_names(File.join(dir, "r.json")), "w0", "the parent's report has its own threads only"
    end
  end

  # A forked child killed before its end writes no report: record names it
  # (a server kills a worker that outlives its shutdown timeout), and not
  # the child that ended and wrote one, nor those that ran another program.
  def test_record_names_a_forked_child_that_was_killed
    Dir.mktmpdir do |dir|
      program = "#{WORK}\nr, w = IO.pipe\n" \
                "killed = fork { r.close; work; w.close; sleep }\nw.close; r.read; " \
                "Process.kill(:KILL, killed); Process.wait(killed)\n" \
                "ended = fork { work }; Process.wait(ended)\n" \
                "execs = [fork { exec('true') }, fork { Process.exec('true') }, fork { Kernel.exec('true') }]\n" \
                "execs.each { |p| Process.wait(p) }; puts [killed, ended, *execs].join(' ')"
      out, err, status = record(dir, program)
      assert_true(status.success?, err)
      killed, ended, *execs = out.lines.first.split.map { |p| Integer(p) }
      assert_match(/forked process #{killed} ended without writing its report \(killed/, err)
      assert_equal 1, err.scan("ended without").size, "a child that ran another program is not lost: #{err}"
      assert_equal 3, execs.size
      assert_match(/report of forked process #{ended} written to/, err)
      assert_equal(["r.json", "r.#{ended}.json"].sort, Dir.children(dir).sort)
    end
  end

  # A name of up to 255 bytes is valid: the temporary files the report goes
  # through are cut to fit, keeping ".gz" (the report is still gzip).
  def test_record_to_the_longest_name
    Dir.mktmpdir do |dir|
      name = "\u00e9" * 123 + ".json.gz"
      assert_equal 254, name.bytesize
      out, err, status = capture(clean_env, CLI, "record", "-o", name, "--", RbConfig.ruby, "-e", "#{WORK}\nwork",
                                 chdir: dir)
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
      log, status = capture(clean_env, CLI, "record", "-o", "r.json", "--html", "r.html", "--", RbConfig.ruby, "-e",
                            "#{WORK}\nwork\nputs 'program done'", chdir: dir, merge: true)
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
        _out, err, status = capture(clean_env, CLI, "record", "-o", output, "--", RbConfig.ruby, "-e", program,
                                    chdir: dir)
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

  # A FIFO output is written into once, never replaced.
  def test_record_into_a_fifo
    Dir.mktmpdir do |dir|
      fifo = File.join(dir, "pipe")
      File.mkfifo(fifo)
      File.open(fifo, File::RDWR) do |io| # never EOF: everything written is read
        data = +""
        reader = Thread.new { loop { data << io.readpartial(65_536) } }
        _out, err, status = capture(clean_env, CLI, "record", "-o", fifo, "--", RbConfig.ruby, "-e", "#{WORK}\nwork",
                                    chdir: dir)
        assert_true(status.success?, err)
        Timeout.timeout(30) { sleep 0.05 until data.end_with?("}\n") || data.end_with?("}") }
        sleep 0.2 # a second copy, if any, would follow at once
        reader.kill
        assert_include(JSON.parse(data)["threads"].map { |t| t["name"] }, "w1") # one document, not two
        assert(File.pipe?(fifo), "the FIFO is still a FIFO")
      end
    end
  end

  # A program that is not Ruby writes no report: a note, and its own status.
  def test_not_a_ruby_program
    Dir.mktmpdir do |dir|
      _out, err, status = capture(clean_env, CLI, "record", "-o", "r.json", "--", "sh", "-c", "exit 0", chdir: dir,
                                  timeout: 60)
      assert_equal(0, status.exitstatus, err)
      assert_match(/the program wrote no report \(it did not load the profiler: not a Ruby program\?\)/, err)
      assert_empty(Dir.children(dir))

      _out, err, status = record(dir, "exit!(3)")
      assert_equal(3, status.exitstatus, err)
      assert_match(/the program ended without writing its report \(killed, or it ended with exit!\)/, err)
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

  # Starts record (through wrapper, a command that execs its arguments) on
  # program (argv) with stdout and stderr to one file; returns its pid.
  def spawn_record(dir, log, *program, wrapper: [])
    Process.spawn(clean_env, *wrapper, CLI, "record", "-o", File.join(dir, "r.json"), "--", *program, chdir: dir,
                                                                                                   %i[out err] => log)
  end

  def wait_for(what, deadline: 60)
    Timeout.timeout(deadline, Timeout::Error, "waited #{deadline} s for #{what}") { sleep 0.05 until yield }
  end

  # Runs the block with the pid a program wrote to pid_file; kills it at the end.
  def with_program_pid(pid_file)
    wait_for("the program to start") { File.size?(pid_file) }
    ruby_pid = Integer(File.read(pid_file))
    yield ruby_pid
  ensure
    begin
      Process.kill(:KILL, ruby_pid) if ruby_pid
    rescue Errno::ESRCH
      nil
    end
  end

  def hidden_files(dir) = Dir.children(dir).grep(/\A\./)

  # The argv of a shell that runs a Ruby program and then says "after".
  def ruby_under_a_shell(program) = ["sh", "-c", "#{RbConfig.ruby} -e \"$1\"; echo after", "sh", program]

  # A program that works, writes its pid to pid_file, then runs the rest.
  def pid_program(pid_file, rest) = "#{WORK}\nwork\nFile.write(#{pid_file.dump}, Process.pid.to_s)\n#{rest}"

  # A program started with SIGHUP ignored (nohup) survives a hangup under
  # record as it does without it: autorecord leaves ignored signals alone.
  def test_nohup_program_survives_a_hangup
    Dir.mktmpdir do |dir|
      pid_file = File.join(dir, "pid")
      go = File.join(dir, "go")
      log = File.join(dir, "log")
      program = pid_program(pid_file, "sleep 0.05 until File.exist?(#{go.dump})\nputs 'survived'")
      pid = spawn_record(dir, log, RbConfig.ruby, "-e", program, wrapper: ["sh", "-c", 'trap "" HUP; exec "$@"', "sh"])
      with_program_pid(pid_file) do |ruby_pid|
        Process.kill(:HUP, ruby_pid)
        File.write(go, "")
        _, status = Timeout.timeout(60) { Process.wait2(pid) }
        pid = nil
        output = File.read(log)
        assert_equal(0, status.exitstatus, output)
        assert_match(/^survived/, output)
        assert_match(/^Threads/, output)
      end
    ensure
      Process.kill(:KILL, pid) if pid
    end
  end

  # SIGTERM to record reaches the whole program, not only the shell it runs:
  # record waits for the Ruby process's report and exits as the shell did.
  def test_sigterm_to_record_reaches_ruby_under_a_shell
    Dir.mktmpdir do |dir|
      pid_file = File.join(dir, "pid")
      log = File.join(dir, "log")
      program = pid_program(pid_file, "sleep 300")
      pid = spawn_record(dir, log, *ruby_under_a_shell(program))
      with_program_pid(pid_file) do
        Process.kill(:TERM, pid)
        _, status = Timeout.timeout(60) { Process.wait2(pid) }
        pid = nil
        output = File.read(log)
        assert_equal(143, status.exitstatus, output)
        assert_match(/^Threads/, output)
        assert_match(/report written to/, output)
        assert_include(thread_names(File.join(dir, "r.json")), "w0")
        assert_empty(hidden_files(dir))
      end
    ensure
      Process.kill(:KILL, pid) if pid
    end
  end


  # Kills record (SIGKILL) once the program has started, then calls the
  # block; the program must put its report at the output and say so.
  # Returns the log.
  def kill_record_then_expect_the_report(dir, pid_file, *program)
    log = File.join(dir, "log")
    pid = spawn_record(dir, log, *program)
    with_program_pid(pid_file) do
      Process.kill(:KILL, pid)
      Process.wait(pid)
      pid = nil
      yield if block_given?
      output = nil
      wait_for("the program's report") { (output = File.read(log)).include?("report written to") }
      assert_match(/^rperf-gvl: record ended before the program; report written to #{Regexp.escape(dir)}\/r\.json$/,
                   output)
      assert_include(thread_names(File.join(dir, "r.json")), "w0")
      assert_empty(hidden_files(dir))
      output
    end
  ensure
    Process.kill(:KILL, pid) if pid
  end

  # record killed: its direct child, the Ruby program, gets SIGTERM, writes
  # its report at exit, finds record gone, puts the report at the output
  # itself and says so.
  def test_kill_of_record_ends_the_program_which_keeps_its_report
    Dir.mktmpdir do |dir|
      pid_file = File.join(dir, "pid")
      kill_record_then_expect_the_report(dir, pid_file, RbConfig.ruby, "-e", pid_program(pid_file, "sleep 300"))
    end
  end

  # record killed while a shell runs the Ruby program: the shell gets
  # SIGTERM, the Ruby process runs on and, at its end, puts its report at
  # the output itself and says so; no hidden temporary file stays behind.
  def test_kill_of_record_under_a_shell_leaves_no_hidden_report
    Dir.mktmpdir do |dir|
      pid_file = File.join(dir, "pid")
      go = File.join(dir, "go")
      program = pid_program(pid_file, "sleep 0.05 until File.exist?(#{go.dump})")
      output = kill_record_then_expect_the_report(dir, pid_file, *ruby_under_a_shell(program)) { File.write(go, "") }
      assert_not_match(/^after$/, output, "the shell got SIGTERM")
    end
  end

  # A terminal session (a pty): what the terminal shows, read until a
  # pattern appears or the deadline passes. The session starts with SIGINT
  # at its default, as a shell's would: a suite started in the background
  # (an `&` without job control) ignores SIGINT, and an ignored signal is
  # inherited across exec, where record keeps it ignored on purpose.
  class Terminal
    def initialize(env, *command)
      require "pty"
      previous = trap("INT", "DEFAULT")
      begin
        @read, @write, @pid = PTY.spawn(env, *command)
      ensure
        trap("INT", previous)
      end
      @seen = +""
    end

    attr_reader :pid, :seen

    def type(text) = @write.write(text)

    def expect(pattern, deadline: 60)
      limit = Process.clock_gettime(Process::CLOCK_MONOTONIC) + deadline
      until (match = @seen.match(pattern))
        left = limit - Process.clock_gettime(Process::CLOCK_MONOTONIC)
        raise Timeout::Error, "no #{pattern.inspect} in #{@seen.inspect}; #{processes}" if left <= 0

        begin
          @seen << @read.read_nonblock(4096) if @read.wait_readable(left)
        rescue EOFError, Errno::EIO
          raise Timeout::Error, "the terminal closed before #{pattern.inspect}: #{@seen.inspect}"
        end
      end
      @seen = match.post_match
      match
    end

    # Kills what still runs in the terminal's session (record and the
    # program, which runs in a process group of its own) and reaps record.
    # Only then can the test's directory go: a program left behind by a
    # failed step would write its report into it, and the directory's
    # removal error would hide that step's failure.
    def close
      pids = session_pids
      pids.each do |pid|
        Process.kill(:KILL, pid)
      rescue Errno::ESRCH
        nil
      end
      begin
        Process.wait(@pid)
      rescue Errno::ECHILD
        nil
      end
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
      sleep 0.02 until (session_pids & pids).empty? || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    end

    # What runs in the session, for a failure message: pid, state, what
    # the kernel says it waits in, its command line.
    def processes
      session_pids.map do |pid|
        wchan = File.read("/proc/#{pid}/wchan") rescue "?"
        state = File.read("/proc/#{pid}/stat")[/\) (\S)/, 1] rescue "?"
        cmd = File.read("/proc/#{pid}/cmdline").tr("\0", " ")[0, 60] rescue "?"
        "#{pid} #{state} #{wchan} #{cmd}"
      end.join(" | ")
    end

    # Live processes of the session PTY.spawn made (its id is the pid).
    def session_pids
      Dir["/proc/[0-9]*/stat"].filter_map do |f|
        stat = File.read(f)
        fields = stat[(stat.rindex(")") + 2)..].split
        f[%r{/proc/(\d+)/}, 1].to_i if fields[3].to_i == @pid && fields[0] != "Z"
      rescue SystemCallError
        nil
      end
    end
  end

  TERMINAL_PROGRAM = <<~'RUBY'
    $stdout.sync = true
    puts "ready"
    line = $stdin.gets
    puts "got #{line}"
    sleep if line.start_with?("sleep")
  RUBY

  # On a terminal the program gets it: it reads what is typed, and Ctrl-C
  # reaches it (once) while record prints the summary and exits 130.
  def test_on_a_terminal_the_program_reads_and_gets_ctrl_c
    Dir.mktmpdir do |dir|
      output = File.join(dir, "r.json")
      term = Terminal.new(clean_env, CLI, "record", "-o", output, "--", RbConfig.ruby, "-e", TERMINAL_PROGRAM)
      term.expect(/ready/)
      term.type("hello\n")
      term.expect(/got hello/)
      term.expect(/Threads/)
      _, status = Timeout.timeout(60) { Process.wait2(term.pid) }
      assert_equal(0, status.exitstatus)

      term = Terminal.new(clean_env, CLI, "record", "-o", output, "--", RbConfig.ruby, "-e", TERMINAL_PROGRAM)
      term.expect(/ready/)
      term.type("sleep\n")
      term.expect(/got sleep/)
      term.type("\x03")
      term.expect(/Threads/)
      _, status = Timeout.timeout(60) { Process.wait2(term.pid) }
      assert_equal(130, status.exitstatus, term.seen)
    ensure
      term&.close
    end
  end

  # Job control as under a shell: Ctrl-Z stops the program and record (the
  # shell says Stopped), fg gives both the terminal back and the program
  # reads on.
  def test_ctrl_z_and_fg_under_a_shell
    Dir.mktmpdir do |dir|
      script = File.join(dir, "prog.rb")
      File.write(script, TERMINAL_PROGRAM)
      env = clean_env.merge("PS1" => "prompt$ ", "HISTFILE" => File::NULL, "TERM" => "dumb")
      term = Terminal.new(env, "bash", "--norc", "--noprofile", "-i")
      term.expect(/prompt\$ /)
      term.type("cd #{dir} && #{CLI} record -o r.json -- #{RbConfig.ruby} prog.rb\n")
      term.expect(/^ready/)
      term.type("\x1a")
      term.expect(/Stopped/)
      term.expect(/prompt\$ /)
      term.type("fg\n")
      term.expect(/record/) # bash names the job it continues
      term.type("after fg\n")
      term.expect(/got after fg/)
      term.expect(/Threads/)
      term.expect(/prompt\$ /)
      term.type("echo status=$?\n")
      assert_equal("0", term.expect(/status=(\d+)/)[1])
      term.type("exit\n")
    ensure
      term&.close
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

# frozen_string_literal: true

# The middleware's units counted in C (ext/rperf/log_unit.h): their lines
# must be the bytes the log's Ruby path writes from the same counter reads,
# in every format and unit, with causes, before and after windows; the
# profiler's refcount and the thread's labels come back as they were; and
# where the C path does not apply the Ruby path measures the unit.
require "json"
require "stringio"
require "rperf/rack"
require_relative "contention_helper"

class TestLogCUnit < Test::Unit::TestCase
  include ContentionHelper

  FORMATS = [%i[logfmt ms], %i[logfmt ns], %i[json ms], %i[json ns]].freeze

  def setup
    ContentionHelper.iterations_per_second
    Rperf.start(mode: :counters, defer: true)
  end

  def teardown
    Rperf.stop if Rperf.running?
  end

  def env_for(path, hooks)
    { "REQUEST_METHOD" => "GET", "PATH_INFO" => path, "SCRIPT_NAME" => "", "rack.after_reply" => hooks }
  end

  # The line the Ruby path writes for a finished unit: its Measurements,
  # made from the same reads, through the Ruby formatting.
  def ruby_line(log, unit)
    copy = unit.dup
    copy.result # the lazily made numbers, kept by the copy
    copy.before_window
    copy.after_window
    copy.instance_variable_set(:@reads, nil)
    log.__send__(:unit_line, copy)
  end

  # Requests on a thread that blocks between them (a pipe read, as a server
  # thread on its socket), whose app sleeps (a blocked cause) and burns CPU.
  # path: every request's path (one label set), else /users/0, /users/1...
  def serve(mw, requests, path: nil)
    r, w = IO.pipe
    units = []
    server = Thread.new do
      requests.times do |i|
        r.read(1)
        hooks = []
        env = env_for(path || "/users/#{i}", hooks)
        begin
          mw.call(env)
        rescue KeyError
          nil # the line says error=KeyError
        end
        burn_work(0.0005)
        hooks.each(&:call)
        units << env[Rperf::Rack::ENV_KEY]
      end
    end
    requests.times do
      sleep 0.005
      w.write("x")
    end
    server.join
    units
  ensure
    r&.close
    w&.close
  end

  # Requests to one route with ever new ids take the C request path: the
  # route's label is one Hash, which the label cap's identity table (bounded
  # by max_label_sets) knows after the first request.
  def test_new_ids_of_one_route_take_the_c_request_path
    io = StringIO.new
    log = Rperf::ContentionLog.new(output: io, max_label_sets: 2)
    mw = Rperf::Rack::Middleware.new(->(_env) { [200, {}, ["ok"]] }, log: log)
    envs = Array.new(12) { |i| env_for("/items/#{1000 + i}/parts/#{i}", []) }
    envs.each do |e|
      mw.call(e)
      e["rack.after_reply"].each(&:call)
    end
    assert log.flush(10)
    c_path = envs.drop(1).map { |e| e["rack.after_reply"] == [e[Rperf::Rack::ENV_KEY].reads] }
    assert_equal [true] * 11, c_path
    assert_equal 12, io.string.lines.grep(%r{label\.endpoint="GET /items/:id/parts/:id"}).size, io.string
  end

  # A labeller makes a new Hash each request: the middleware keeps one
  # frozen copy per content, so its requests take the C path too. A value
  # the labeller changes afterwards changes no label; a value that is not
  # plain (an Array) goes the Ruby path, with the same line.
  def test_a_labellers_requests_take_the_c_request_path
    io = StringIO.new
    log = Rperf::ContentionLog.new(output: io)
    route = +"GET /a/:id"
    value = nil
    mw = Rperf::Rack::Middleware.new(->(_env) { [200, {}, ["ok"]] }, log: log,
                                     labeller: ->(_env) { { "route" => route, tier: value } })
    served = lambda do
      e = env_for("/a/1", [])
      mw.call(e)
      e["rack.after_reply"].each(&:call)
      e["rack.after_reply"] == [e[Rperf::Rack::ENV_KEY].reads]
    end
    assert_equal [false, true, true, true], Array.new(4) { served.() }
    route << "-changed"
    assert_equal [false, true], Array.new(2) { served.() }, "a new content: a new copy, known after its first"
    value = %w[x y]
    assert_equal [false, false], Array.new(2) { served.() }
    assert log.flush(10)
    lines = io.string.lines
    assert_equal 4, lines.grep(%r{label\.route="GET /a/:id" }).size, io.string
    assert_equal 4, lines.grep(%r{label\.route="GET /a/:id-changed" }).size, io.string
    assert_equal 2, lines.grep(/label\.tier=/).size, io.string
  end

  def test_c_lines_equal_the_ruby_path_lines_for_the_same_reads
    app = lambda do |_env|
      sleep 0.002
      burn_work(0.001)
      [201, {}, ["ok"]]
    end
    # The line made whole in C (status alone), and the C numbers after the
    # Ruby fields (application fields, label_capped, error).
    with_fields = lambda do |env|
      unit = env[Rperf::Rack::ENV_KEY]
      unit.add_field(:user, 7)
      unit.add_fields(wall_ms: "forged")
      response = app.call(env)
      raise KeyError, "no such user" if env["PATH_INFO"].end_with?("2")

      response
    end
    variants = FORMATS.flat_map do |format, units|
      [[format, units, app, {}, nil],
       [format, units, with_fields, { max_label_sets: 2 }, ->(env) { { path: env["PATH_INFO"] } }]]
    end
    variants.each do |format, units, variant_app, opts, labeller|
      lines = []
      log = Rperf::ContentionLog.new(async: false, format: format, units: units, **opts) { |l| lines << l }
      mw = Rperf::Rack::Middleware.new(variant_app, log: log, labeller: labeller)
      seen = serve(mw, 4)
      assert_equal 4, lines.size, lines.inspect
      seen.zip(lines).each_with_index do |(unit, line), i|
        assert unit.counting?, "the request was counted in C (#{format}, #{units})"
        assert unit.after_window&.states?, "after window: #{line}"
        # The first one's thread blocked while the profile was paused: no
        # runnable time known, no previous unit.
        assert unit.before_window&.states?, "before window: #{line}" if i.positive?
        assert_equal ruby_line(log, unit), line, "#{format} #{units}"
        generic = log.format_line(log.__send__(:unit_fields, unit))
        format == :json ? assert_equal(JSON.parse(generic), JSON.parse(line)) : assert_equal(generic, line)
      end
      assert(lines.any? { |l| l.include?("blocked_sleep_") }, "a cause field: #{lines.first}")
      if labeller
        assert(lines.all? { |l| l.include?("user") && l.include?("app.wall_ms") }, lines.first)
        assert(lines.last(2).all? { |l| l.include?("label_capped") }, lines.last)
        assert(lines[2].include?("KeyError"), lines[2])
      else
        assert(lines.all? { |l| l.include?("status") && l.include?("201") }, lines.first)
      end
      assert_equal 0, Rperf.__send__(:_c_refcount), "refcount back to the deferred profile's"
      assert_equal({}, Rperf.labels)
    end
  end

  # A line reads the log's constant keys from one packed copy
  # (log_unit.c); keys it may not keep (Strings that can change) are read
  # from their Strings each time. Both ways give the same bytes, and a
  # changed key shows in the next line.
  def test_packed_and_unpacked_keys_give_the_same_line
    Rperf.profile do
      FORMATS.each do |format, units|
        keys = Rperf::ContentionLog::C_UNIT_KEYS[format][units]
        ends = Rperf::ContentionLog::C_LINE_ENDS[format]
        reads = Rperf.__send__(:_c_unit_begin, { route: "packed" }.freeze, nil)
        refute_nil reads
        burn_work(0.0005)
        assert Rperf.__send__(:_c_unit_end, reads)
        line = ->(k) { Rperf.__send__(:_c_unit_line, reads, +"p", 200, ends, k, units == :ms) }
        packed = line.call(keys)
        assert_equal packed, line.call(keys), "#{format} #{units}: the packed keys again"
        open_keys = keys.map(&:dup)
        assert_equal packed, line.call(open_keys), "#{format} #{units}: keys read from their Strings"
        assert_equal packed, line.call(open_keys.freeze), "#{format} #{units}: a frozen Array of open Strings"
        open_keys[0].replace("changed=")
        changed = line.call(open_keys)
        assert changed.include?("changed="), "#{format} #{units}: #{changed}"
        assert_equal packed.sub(keys[0], "changed="), changed
      end
    end
  end

  # Units' reads live in blocks a collection gives back for later units
  # (log_unit.c): a later unit starts from nothing the earlier one read.
  def test_reads_of_collected_units_do_not_reach_later_units
    Rperf.profile do
      labels = { route: "recycled" }.freeze
      prior = nil
      300.times do
        reads = Rperf.__send__(:_c_unit_begin, labels, prior)
        Rperf.__send__(:_c_unit_end, reads)
        Rperf.__send__(:_c_unit_after, reads)
        prior = reads
      end
      refute_nil Rperf.__send__(:_c_unit_read, prior, 3), "a unit with a prior has its read"
      prior = nil
      GC.start
      fresh = Array.new(300) { Rperf.__send__(:_c_unit_begin, labels, nil).tap { |r| Rperf.__send__(:_c_unit_end, r) } }
      fresh.each do |reads|
        assert_nil Rperf.__send__(:_c_unit_read, reads, 3), "no prior read"
        assert_nil Rperf.__send__(:_c_unit_read, reads, 2), "no after-reply read"
        refute_nil Rperf.__send__(:_c_unit_read, reads, 1)
      end
    end
  end

  # The status is written in C for any Fixnum (negative ones and the
  # largest too) and by Ruby for a Bignum: the line is the Ruby path's.
  def test_c_lines_write_any_integer_status_as_ruby_does
    statuses = [200, -7, 0, 299, 2**62 - 1, -(2**62), 2**64, -(2**64)]
    left = statuses.dup
    app = ->(_env) { [left.shift, {}, ["ok"]] }
    FORMATS.each do |format, units|
      left.replace(statuses)
      lines = []
      log = Rperf::ContentionLog.new(async: false, format: format, units: units) { |l| lines << l }
      seen = serve(Rperf::Rack::Middleware.new(app, log: log), statuses.size, path: "/status")
      assert_equal statuses.size, lines.size, lines.inspect
      seen.zip(lines, statuses).each do |unit, line, status|
        assert unit.counting?, "counted in C (#{format}, #{units})"
        assert_equal status, unit.status
        assert_equal ruby_line(log, unit), line, "#{format} #{units} status #{status}"
        text = format == :json ? JSON.parse(line)["status"].to_s : line[/ status=(\S+)/, 1]
        assert_equal status.to_s, text, line
      end
    end
  end

  # Each thread's last end is kept for its next unit's before window; the
  # entries of threads that died go when a new thread finds the table full,
  # so a server that starts a thread per job keeps a bounded table.
  def test_last_ends_of_dead_threads_are_dropped
    log = Rperf::ContentionLog.new(async: false) { |_| nil }
    mw = Rperf::Rack::Middleware.new(->(_env) { [200, {}, ["ok"]] }, log: log)
    table = log.instance_variable_get(:@last_ends)
    keeper_go = Queue.new
    keeper_done = Queue.new
    keeper = Thread.new do
      mw.call(env_for("/keep", nil))
      keeper_done.push(true)
      keeper_go.pop
    end
    # Bounded: a broken log fails the assertion below instead of hanging.
    keeper_done.pop(timeout: 30)
    counted = 0
    300.times do |i|
      Thread.new do
        hooks = []
        mw.call(env_for("/jobs/#{i}", hooks))
        hooks.each(&:call)
        counted += 1 if table[Thread.current].is_a?(Rperf::UnitReads)
      end.join
      assert_operator table.size, :<=, Rperf::ContentionLog::LAST_ENDS_MIN + 1
    end
    assert_equal 300, counted, "every thread's end was kept for its next unit"
    assert table.key?(keeper), "a live thread's last end stays"
  ensure
    keeper_go&.push(true)
    keeper&.join
  end

  # Through the background writer the C path pushes a line into the
  # writer's queue without making a String: the same bytes, whole lines,
  # for an IO and for a block.
  def test_queued_c_lines_equal_the_ruby_path_lines
    app = ->(_env) { burn_work(0.0005) && [200, {}, ["ok"]] }
    FORMATS.each do |format, units|
      io = StringIO.new
      blocks = []
      [[io], [nil, ->(l) { blocks << l }]].each do |output, block|
        log = Rperf::ContentionLog.new(output: output, format: format, units: units, &block)
        mw = Rperf::Rack::Middleware.new(app, log: log)
        seen = serve(mw, 3)
        assert log.flush(10), "the writer delivered everything"
        lines = block ? blocks : io.string.lines(chomp: true)
        assert_equal 3, lines.size, lines.inspect
        seen.zip(lines).each do |unit, line|
          assert unit.counting?
          assert_equal ruby_line(log, unit), line, "#{format} #{units} #{block ? 'block' : 'IO'}"
        end
        assert_equal 3, log.stats[:lines]
      end
    end
  end

  # Requests of a label set seen before begin, end and write their line in
  # C (_c_request_begin/_c_request_end; the after-reply hook is the unit's
  # reads): the same bytes as the Ruby path, through the writer's queue.
  def test_a_known_label_set_takes_the_c_request_path
    app = ->(_env) { burn_work(0.0005) && [200, {}, ["ok"]] }
    FORMATS.each do |format, units|
      io = StringIO.new
      log = Rperf::ContentionLog.new(output: io, format: format, units: units)
      mw = Rperf::Rack::Middleware.new(app, log: log)
      seen = serve(mw, 4, path: "/same")
      assert log.flush(10)
      lines = io.string.lines(chomp: true)
      assert_equal 4, lines.size, lines.inspect
      seen.zip(lines).each_with_index do |(unit, line), i|
        assert unit.counting?
        assert unit.after_window&.states?, "after window: #{line}"
        assert unit.before_window&.states?, "before window: #{line}" if i.positive?
        assert_equal ruby_line(log, unit), line, "#{format} #{units}"
      end
      assert_equal 0, Rperf.__send__(:_c_refcount)
      assert_equal({}, Rperf.labels)
    end
  end

  # The C request path's hook: once per unit, from any thread (another
  # thread's call writes the line without after_* fields), with Rack 3's
  # arguments; never called, the line comes at the thread's next request
  # or at flush. Units with fields of their own are written by Ruby.
  def test_the_c_request_hook
    io = StringIO.new
    log = Rperf::ContentionLog.new(output: io)
    hooked = ->(env) { [200, {}, [env["PATH_INFO"]]] }
    mw = Rperf::Rack::Middleware.new(lambda { |env|
      env[Rperf::Rack::ENV_KEY].add_field(:user, 7) if env["HTTP_X_USER"]
      hooked.(env)
    }, log: log)
    mw.call(env_for("/k", [])).then { log.flush(10) } # the label set becomes known
    # What the writer delivered (log.flush would also write waiting lines).
    writer = log.instance_variable_get(:@writer)
    written = -> { writer.flush(10) && io.string.lines(chomp: true).drop(1) }
    a = env_for("/k", [])
    mw.call(a)
    unit = a[Rperf::Rack::ENV_KEY]
    assert_equal [unit.reads], a["rack.after_reply"], "the unit's own reads are its hook"
    assert_empty written.()
    2.times { a["rack.after_reply"].each(&:call) }
    assert_equal 1, written.().size
    assert_match(/ after_ms=/, written.()[0])

    b = env_for("/k", [])
    mw.call(b)
    Thread.new { b["rack.after_reply"].each(&:call) }.join
    assert_equal 2, written.().size
    refute_match(/ after_ms=/, written.()[1], "another thread reads no counters of this one")

    c = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/k", "SCRIPT_NAME" => "", "rack.response_finished" => [] }
    mw.call(c)
    c["rack.response_finished"].each { |h| h.call(c, 200, {}, nil) }
    assert_match(/ after_ms=/, written.()[2])

    mw.call(env_for("/k", []))
    assert_equal 3, written.().size, "waits for its hook"
    mw.call(env_for("/k", []))
    assert_equal 4, written.().size, "the hook never ran: written when the next request starts"
    refute_match(/ after_ms=/, written.()[3])
    assert_match(/ before_ms=/, written.()[3])

    d = env_for("/k", []).merge("HTTP_X_USER" => "1")
    mw.call(d)
    d["rack.after_reply"].each(&:call)
    assert_equal 6, written.().size, "flushed: the waiting line, then this one"
    assert_match(/ user=7 .* after_ms=/, written.()[5])
    assert_equal 0, Rperf.__send__(:_c_refcount)
  end

  # A fork child's C request lines carry the child's pid, not the parent's.
  def test_a_fork_childs_c_lines_name_the_child
    r, w = IO.pipe
    log = Rperf::ContentionLog.new(output: w)
    mw = Rperf::Rack::Middleware.new(->(_env) { [200, {}, ["ok"]] }, log: log)
    serve3 = lambda do
      3.times do
        env = env_for("/f", [])
        mw.call(env)
        env["rack.after_reply"].each(&:call)
      end
      log.flush(10)
    end
    serve3.call # the first takes the Ruby path, the others C's
    child = fork do
      r.close
      serve3.call
      exit!(0)
    end
    w.close
    Process.wait(child)
    lines = r.read.lines(chomp: true)
    assert_equal 6, lines.size, lines.inspect
    assert_equal [Process.pid] * 3 + [child] * 3, lines.map { |l| Integer(l[/ pid=(\d+)/, 1]) }
    assert(lines.all? { |l| l.include?(" after_ms=") }, lines.last)
  ensure
    r&.close
    w&.close unless w&.closed?
  end

  # While the app runs: the label is on the thread, the profile recording,
  # and the unit's numbers so far are there; afterwards both are undone.
  def test_the_unit_inside_the_request
    inside = nil
    log = Rperf::ContentionLog.new(async: false, output: StringIO.new)
    mw = Rperf::Rack::Middleware.new(lambda do |env|
      burn_work(0.001)
      u = env[Rperf::Rack::ENV_KEY]
      inside = [Rperf.labels, Rperf.__send__(:_c_refcount), u.so_far, u.result, u.to_h]
      [200, {}, []]
    end, log: log)
    env = env_for("/a", [])
    mw.call(env)
    labels, refcount, so_far, result, h = inside
    assert_equal({ endpoint: "GET /a" }, labels)
    assert_equal 1, refcount
    assert_nil result
    assert so_far.states?
    assert_operator so_far.wall_ns, :>=, 900_000
    assert_equal "request", h[:kind]
    assert_equal 0, Rperf.__send__(:_c_refcount)
    assert_equal({}, Rperf.labels)
    unit = env[Rperf::Rack::ENV_KEY]
    assert unit.counting?
    assert_operator unit.result.wall_ns, :>=, so_far.wall_ns
    assert_equal 200, unit.status
    assert_equal "", log.sink.then { "" } # no line before the hook
    assert_equal 1, log.flush.then { log.stats[:lines] }
  end

  # The Ruby path where C does not apply: counters of the caller's own, no
  # profiler labels, no Rperf.profile, a thread already labelled, no profile.
  def test_the_ruby_path_takes_what_c_does_not
    hash_counters = -> { Rperf.thread_contention }
    cases = {
      "counters:" => { counters: hash_counters },
      "label: false" => { label: false },
      "profile: false" => { profile: false }
    }
    cases.each do |name, opts|
      lines = []
      log = Rperf::ContentionLog.new(async: false, **opts) { |l| lines << l }
      env = env_for("/b", [])
      Rperf::Rack::Middleware.new(->(_e) { [200, {}, []] }, log: log).call(env)
      env["rack.after_reply"].each(&:call)
      refute env[Rperf::Rack::ENV_KEY].counting?, name
      assert_equal 1, lines.size, name
      assert_match(/ wall_ms=/, lines[0], name)
    end

    lines = []
    log = Rperf::ContentionLog.new(async: false) { |l| lines << l }
    env = env_for("/c", [])
    Rperf.label(tenant: "t1") { Rperf::Rack::Middleware.new(->(_e) { [200, {}, []] }, log: log).call(env) }
    refute env[Rperf::Rack::ENV_KEY].counting?, "a labelled thread merges its labels in Ruby"
    env["rack.after_reply"].each(&:call)
    assert_match(/label.endpoint="GET \/c"/, lines[0])

    Rperf.stop
    env = env_for("/d", [])
    quiet = Rperf::ContentionLog.new(async: false, output: StringIO.new)
    stderr = $stderr
    $stderr = StringIO.new # the log says once that it has no counters
    begin
      Rperf::Rack::Middleware.new(->(_e) { [200, {}, []] }, log: quiet).call(env)
    ensure
      $stderr = stderr
    end
    refute env[Rperf::Rack::ENV_KEY].counting?
  end

  # The one shared after-reply hook completes only the unit waiting on the
  # calling thread, once; a server that never calls it still gets the line.
  def test_the_shared_hook
    lines = []
    log = Rperf::ContentionLog.new(async: false) { |l| lines << l }
    mw = Rperf::Rack::Middleware.new(->(_e) { [200, {}, []] }, log: log)
    a = env_for("/a", [])
    mw.call(a)
    assert_same log.after_reply_hook, a["rack.after_reply"][0]
    assert a["rack.after_reply"][0].frozen?
    Thread.new { a["rack.after_reply"].each(&:call) }.join
    assert_empty lines, "another thread has no unit waiting"
    2.times { a["rack.after_reply"].each(&:call) }
    assert_equal 1, lines.size
    assert_match(/ after_ms=/, lines[0])
    b = env_for("/b", [])
    mw.call(b)
    mw.call(env_for("/c", []))
    assert_equal 2, lines.size, "the hook never ran: written when the next request starts"
    refute_match(/ after_ms=/, lines[1])
    assert_match(/ before_ms=/, lines[1])
    # Rack 3's response_finished gets a hook of the unit's own.
    d = { "REQUEST_METHOD" => "GET", "PATH_INFO" => "/d", "SCRIPT_NAME" => "", "rack.response_finished" => [] }
    mw.call(d)
    refute_same log.after_reply_hook, d["rack.response_finished"][0]
    log.flush
    assert_equal 4, lines.size
  end
end

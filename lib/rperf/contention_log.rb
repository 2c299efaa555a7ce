# frozen_string_literal: true

# Rperf::ContentionLog writes contention summaries as log lines: one line per
# finished unit of work (a request, a job, a block; #measure) and/or one line
# per label set per interval (#start_interval: Rperf.snapshot(clear: true)
# every N seconds on a background thread). Lines go to a Ruby Logger, an IO
# or a block, as logfmt (default) or JSON lines; keys are listed in
# docs/logging.md and use report.json's state names. Label sets pass through
# a cardinality cap, and logging never raises into the program.
#
# It does NOT start or stop the profiler: the program calls Rperf.start
# (Rperf.start(mode: :counters, defer: true) suits servers: counters mode
# keeps only the totals the lines need, and each unit runs inside
# Rperf.profile, which resumes the deferred profiler, and so the thread's
# counters, while it runs).
#
#   require "rperf/contention_log"
#   log = Rperf::ContentionLog.new(output: Logger.new($stdout))
#   log.measure({ job: "Resize" }, kind: "job") { resize }
#   Rperf.log_contention(task: "import") { import }   # uses ContentionLog.default
require_relative "ext" # the line's numbers are formatted in C
require_relative "log/format"
require_relative "log/label_cap"
require_relative "log/sink"
require_relative "log/writer"
require_relative "log/measurement"
require_relative "log/interval"
require_relative "log/path_normalizer"
# Rperf::Metrics (the metrics: option) loads on first use.
module Rperf
  autoload :Metrics, File.expand_path("metrics", __dir__)
end

module Rperf
  class ContentionLog
    TAG = "rperf.contention"
    NO_FIELDS = {}.freeze
    # The threads' last ends kept before dead threads' entries are dropped.
    LAST_ENDS_MIN = 64
    NotRunning = Class.new(StandardError)
    UNITS = %i[ms ns].freeze

    # One unit of work being measured. The application sees it as
    # env["rperf.contention"] (Rack) or as the block argument of #measure.
    class Unit
      attr_reader :kind, :labels, :thread
      # result: the final numbers (a Rperf::Log::Measurement), set when the
      # unit ends.
      # status: the response status a middleware sets (a field of its own,
      # which application fields cannot replace).
      attr_accessor :error, :capped, :status
      # before_window: what the thread went through from becoming runnable
      # (its request's bytes arrived) to the unit's start; after_window: from
      # the end of the app's work to the after-reply hook (the response
      # written). Both Measurements, nil when not asked for or not known.
      attr_writer :result, :before_window, :after_window, :end_read
      # The after-reply callables the line waits for (nil: none).
      attr_accessor :after_hooks
      # A Rperf::UnitReads while the unit is counted in C (log_unit.h): its
      # Measurements are then made from those reads when first asked for.
      attr_reader :reads

      # reads: the unit's Rperf::UnitReads when C counts it (then its
      # clock is the reads').
      def initialize(log, kind, labels, before, reads = nil)
        @log = log
        @kind = kind
        @labels = labels
        @before = before
        @thread = Thread.current
        @started_ns = reads ? nil : Unit.clock(before)
        @ended_ns = nil
        @after = nil
        @result = nil
        @error = nil
        @capped = false
        @status = nil
        @extra = nil
        @reads = reads
        @reads_ended = false
        @after_read = false
      end

      # A request's unit (ContentionLog#begin_request_unit): capped, its
      # after-reply hooks and its before window wanted, in one call.
      def request!(capped, hooks)
        @capped = capped
        @after_hooks = hooks
        @want_before = true
      end

      # Its C end read was taken (true), or the profile went away before it
      # (false): then it goes on as a Ruby unit from its begin read.
      def reads_ended(ok)
        if ok
          @reads_ended = true
        else
          @before = reads_at(0)
          @before_window = @log.__send__(:window_before, @before, reads_at(3)) if @want_before
          @started_ns = Unit.clock(@before)
          @reads = nil
        end
      end

      def after_read!
        @after_read = true
      end

      def counting? = !@reads.nil?

      def started_ns
        @started_ns ||= reads_at(0)&.first
      end

      def result
        return @result if @result || !@reads_ended

        @result = Log::Measurement.between(begin_read, end_read)
      end

      def before_window
        return @before_window if @before_window || !@reads_ended || !@want_before

        @before_window = @log.__send__(:window_before, begin_read, reads_at(3))
      end

      def after_window
        return @after_window if @after_window || !@after_read

        @after_window = Log::Measurement.between(end_read, reads_at(2))
      end

      def begin_read
        @before ||= reads_at(0)
      end

      def end_read
        return @end_read if @end_read || !@reads_ended

        @end_read = reads_at(1)
      end

      # One of the C reads as a thread_counters Array (log_unit.h's numbering).
      def reads_at(which)
        @reads && Rperf.__send__(:_c_unit_read, @reads, which)
      end

      # (Re)starts the unit's clock and counters; ContentionLog calls it
      # inside Rperf.profile so both reads see the profiler recording.
      def begin_counters(before)
        @before = before
        @started_ns = Unit.clock(before)
      end

      def end_counters(after)
        @after = after
        @end_read = after
        @ended_ns = Unit.clock(after)
      end

      # The clock reading counters were taken at (the first of a
      # thread_counters Array, thread_contention's monotonic_ns), so that the
      # wall time is the one their states add up to; a separate reading when
      # they have none.
      def self.clock(counters)
        ns = counters.is_a?(Array) ? counters[0] : (counters[:monotonic_ns] if counters.is_a?(Hash))
        ns.is_a?(Integer) ? ns : Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
      end

      def counters_ended?
        !@ended_ns.nil? || @reads_ended
      end

      # Numbers from the start of the unit until now. Only the unit's own
      # thread can read its counters; other threads get nil.
      def so_far
        done = result
        return done if done
        return nil unless Thread.current == @thread

        @log.__send__(:measure_since, begin_read, started_ns)
      end

      # Adds application fields (e.g. user_id: 7) to the unit's log line. A
      # field named like one of the line's own (kind, status, label.*, the
      # numbers) is written as app.<name>: it can neither replace nor repeat
      # them. Two fields of one name (:a and "a"): the last one set wins.
      def add_fields(**fields)
        (@extra ||= {}).merge!(fields)
        self
      end

      # Adds one field (no keyword Hash: the middleware's per-request path).
      def add_field(key, value)
        (@extra ||= {})[key] = value
        self
      end

      def extra_fields
        @extra || NO_FIELDS
      end

      def to_h
        (so_far&.to_h || {}).merge(kind: @kind, labels: @labels)
      end

      def finish(after)
        if @ended_ns
          wall = @ended_ns - @started_ns
          @result = Log::Measurement.between(@before, @after, wall)
        else
          @end_read = after
          @result = @log.__send__(:measure_since, @before, @started_ns, after)
        end
      end
    end

    class << self
      # The log used by Rperf.log_contention; logfmt on $stderr unless set.
      def default
        @default_mutex.synchronize { @default ||= new(output: $stderr) }
      end

      def default=(log)
        unless log.nil? || log.is_a?(ContentionLog)
          raise ArgumentError, "ContentionLog.default must be a Rperf::ContentionLog, got #{log.class}"
        end

        @default_mutex.synchronize { @default = log }
      end
    end
    @default_mutex = Mutex.new
    @default = nil

    attr_reader :format, :units, :label_cap, :sink, :metrics
    # What Rperf::Rack::Middleware passes to _c_request_begin (log_unit.h):
    # nil when this log's requests cannot be counted in C.
    def request_config = @c_request

    # output:        a Logger, an IO, or nil when a block is given
    # format:        :logfmt (default) or :json
    # units:         :ms (default; floats) or :ns (integers named as in report.json)
    # level:         Logger severity (:info)
    # max_label_sets: label sets admitted before new ones fold into "other" (1000)
    # label:         also set the labels on the profiler during the unit (true)
    # profile:       run units inside Rperf.profile, which resumes a profiler started
    #                with defer: true while they run (true); false: Rperf.label only
    # counters:      a callable returning the current thread's cumulative counters
    #                (default: Rperf.thread_contention)
    # max_interval_lines: label-set lines per interval before the rest fold into one (100)
    # unlabelled:    include work without labels in interval lines (true)
    # async:         write lines from a background thread (true): the unit's
    #                thread never waits for the output; at most max_queued
    #                lines wait, the rest are dropped and counted (stats)
    # metrics:       a metrics directory (or a Rperf::Metrics::Store) that counts
    #                every unit whose line is made (docs/metrics.md); nil: none
    def initialize(output: nil, format: :logfmt, units: :ms, level: :info, max_label_sets: 1000,
                   label: true, profile: true, counters: nil, max_interval_lines: 100,
                   unlabelled: true, async: true, max_queued: Log::Writer::DEFAULT_MAX_LINES, metrics: nil, &block)
      @format = Log::Format.validate(format)
      @units = units.to_sym
      raise ArgumentError, "units must be :ms or :ns, got #{units.inspect}" unless UNITS.include?(@units)
      unless max_interval_lines.is_a?(Integer) && max_interval_lines >= 1
        raise ArgumentError, "max_interval_lines must be an Integer >= 1, got #{max_interval_lines.inspect}"
      end
      if counters && !counters.respond_to?(:call)
        raise ArgumentError, "counters must respond to #call, got #{counters.class}"
      end

      @metrics = metrics ? Metrics.resolve(metrics) : nil
      @sink = Log::Sink.new(output, level: level, &block)
      @writer = async ? Log::Writer.new(@sink, max_lines: max_queued) : nil
      # The clock reading and counters read at the end of the last unit on
      # each thread, by Thread: where the next unit's "before" may begin at
      # the earliest. compare_by_identity, like @pending below: a read or a
      # write of a known thread is one call (log_unit.c makes it from C).
      # Dead threads' entries go when a new thread finds it full (#last_end=).
      @last_ends = {}.compare_by_identity
      @last_ends_bound = LAST_ENDS_MIN
      # Units whose line waits for their after-reply hook. No mutex: each
      # use is one call on a compare_by_identity Hash, which runs no Ruby
      # code and so is atomic under the GVL (the log lives in one Ractor).
      @pending = {}.compare_by_identity
      @label_cap = Log::LabelCap.new(max_label_sets: max_label_sets)
      @label = label ? true : false
      @profile = profile ? true : false
      @counters = counters
      @max_interval_lines = max_interval_lines
      @unlabelled = unlabelled ? true : false
      @timer = nil
      @timer_mutex = Mutex.new
      @lines = 0
      @counter_failures = 0
      @stats_mutex = Mutex.new
      # Request units counted in C (#begin_request_unit) when the counters
      # are the profiler's own and the unit runs labelled inside Rperf.profile.
      @c_units = @counters.nil? && @label && @profile
      @c_unit_keys = C_UNIT_KEYS[@format][@units]
      @after_reply_hook = ->(*) { complete_here }.freeze
      # What a request's unit needs to begin, end and write its line in C
      # (log_unit.c's REQ_* order): each request then makes two calls into
      # C, and the server's after-reply call is a third.
      @c_request = if @c_units
                     [self, @pending, @last_ends, @label_cap.identity_table, @writer, @writer&.queue,
                      C_LINE_ENDS[@format], @c_unit_keys, @units == :ms, @metrics, Log::Writer::BATCH, Unit,
                      "request"].freeze
                   end
    end

    # Runs the block as one unit of work and writes its line when it ends,
    # also when it raises (then with error=ExceptionClass). Returns the
    # block's value; the block's exceptions propagate unchanged, the log's
    # own never do. The block receives the Unit.
    # Labels come as a Hash or as keywords (a label named kind, fields,
    # before or after must go in the Hash).
    #
    # before: true adds the unit's before_* fields: what its thread went
    # through since it last became runnable after blocking (a server
    # thread's request arrived) or since its previous unit ended, whichever
    # is later. after: an Array of callables the server runs once the
    # response is written (Puma's env["rack.after_reply"], Rack 3's
    # env["rack.response_finished"]): the line then waits for that call and
    # adds the after_* fields; if it never comes, the line is written
    # without them when the thread's next unit starts.
    def measure(labels = nil, kind: "block", fields: nil, before: false, after: nil, **label_kw, &block)
      raise ArgumentError, "ContentionLog#measure needs a block" unless block

      flush_pending
      unit = new_unit(labels, kind, label_kw, read: false)
      unit&.add_fields(**fields) if fields
      unit&.instance_variable_set(:@want_before, true) if before
      unit&.instance_variable_set(:@after_hooks, after) if after.is_a?(Array)
      if block&.lambda? && block.arity.zero? # &-> { } or &method(:m): don't pass the unit
        work = block
        block = proc { work.call }
      end
      measure_unit(unit, &block)
    end

    # Runs the block for a unit from #start_unit (nil is allowed: the block
    # then runs unmeasured) and finishes it as #measure does. The counters
    # are read inside Rperf.profile: with defer: true the profiler records
    # only while some unit runs, and both reads must see it recording.
    def measure_unit(unit, &block)
      entered = false
      begin
        with_profiler(unit) do |counting|
          entered = true
          counting ? block.call(unit) : counted(unit, &block)
        end
      rescue Exception => e # rubocop:disable Lint/RescueException -- re-raised
        raise if entered

        # Setting the labels failed before the block ran: run it unlabelled.
        @sink.failed(e, what: "setting profiler labels")
        counted(unit, &block)
      end
    rescue Exception => e # rubocop:disable Lint/RescueException -- recorded, then re-raised
      unit.error ||= e.class.name if unit
      raise
    ensure
      finish_unit(unit) if unit
    end

    # Starts a unit without a block (for callers that cannot wrap the work
    # in one, like hooks before/after a request). Never raises; nil when
    # the unit could not be started. Pair with #finish_unit on the same thread.
    # With a profiler started with defer: true, prefer #measure: a unit
    # outside Rperf.profile is only counted while other work keeps the
    # profiler recording.
    def start_unit(labels = nil, kind: "block", **label_kw)
      new_unit(labels, kind, label_kw, read: true)
    end

    # Ends a unit and writes its line (or, with after hooks, leaves the line
    # to them). Never raises. Returns the Measurement.
    def finish_unit(unit)
      return nil unless unit

      unit.finish(unit.counters_ended? || Thread.current != unit.thread ? nil : read_counters)
      hooks = unit.instance_variable_get(:@after_hooks)
      if hooks && Thread.current == unit.thread && unit.end_read
        @pending[unit] = true
        self.last_end = [:pending, unit]
        hooks << ->(*) { complete_after(unit) }
      else
        emit(unit, unit.end_read)
      end
      unit.result
    rescue StandardError => e
      @sink.failed(e)
      nil
    end

    # The after-reply hook of a unit: reads the counters once the response
    # is written and writes the line with its after_* fields. Never raises.
    def complete_after(unit)
      return unless take_pending(unit)

      if unit.reads
        unit.after_read! if Thread.current == unit.thread && Rperf.__send__(:_c_unit_after, unit.reads)
        return emit(unit, nil)
      end

      now = Thread.current == unit.thread ? read_counters : nil
      unit.after_window = Log::Measurement.between(unit.end_read, now) if now && unit.end_read
      emit(unit, now || unit.end_read)
    rescue StandardError => e
      @sink.failed(e)
    end

    # A request's unit, for Rperf::Rack::Middleware: as #measure starts one
    # (kind "request", before: true, after: hooks), but counted in C where it
    # can be: unit.counting? then says the caller runs the work itself and
    # calls #end_request_unit; else it passes the unit to #measure_unit. nil
    # when no unit could be made (#measure_unit takes that too). Never raises.
    # The middleware tries #request_config's whole C path (log_unit.h) first.
    def begin_request_unit(labels, hooks)
      last = @last_ends[Thread.current]
      last = @last_ends[Thread.current] if flush_pending(last)
      admitted = @label_cap.known(labels)
      folded = false
      admitted, folded = @label_cap.admit_with_status(labels) unless admitted
      reads = nil
      if @c_units && !admitted.empty? && admitted.frozen?
        begin
          reads = Rperf.__send__(:_c_unit_begin, admitted, last)
        rescue StandardError
          nil # #measure_unit sets the labels again and says why they fail
        end
      end
      unit = Unit.new(self, "request", admitted, nil, reads)
      unit.request!(folded, hooks)
      unit
    rescue StandardError => e
      @sink.failed(e)
      nil
    end

    # Ends a unit #begin_request_unit counted in C (in the same thread) and
    # writes its line, or leaves it to the after-reply hooks; after_reply:
    # a callable of #after_reply_hook to add to them (the server runs them on
    # the request's thread; true: #after_reply_hook itself), else one is
    # made for the unit. Never raises.
    def end_request_unit(unit, after_reply = nil)
      after_reply = @after_reply_hook if after_reply == true

      ended = Rperf.__send__(:_c_unit_end, unit.reads)
      unit.reads_ended(ended)
      return finish_unit(unit) unless ended

      if (hooks = unit.after_hooks)
        @pending[unit] = true
        self.last_end = unit
        hooks << (after_reply || ->(*) { complete_after(unit) })
      else
        emit(unit, nil)
      end
      nil
    rescue StandardError => e
      @sink.failed(e)
      nil
    end

    # One callable for every unit's after-reply hook, for servers that call
    # it on the request's thread before that thread's next request (Puma's
    # rack.after_reply): it completes the unit waiting on the calling thread.
    attr_reader :after_reply_hook

    # Writes one line per label set for a report: a Rperf::Report (what
    # Rperf.stop/snapshot return) or a report.json v1 Hash. Returns the
    # number of lines written.
    def log_report(report, kind: "interval")
      interval_fields(report, kind: kind).count { |f| write(f) }
    rescue StandardError => e
      @sink.failed(e)
      0
    end

    # The field hashes #log_report would write, in order (for tests and for
    # callers with their own output).
    def interval_fields(report, kind: "interval")
      report = self.class.report_hash(report)
      meta = Log::IntervalSummary.fetch(report, :meta) || {}
      duration = Log::IntervalSummary.fetch(meta, :duration_ns)
      drops = Log::IntervalSummary.drops(report)
      rows = Log::IntervalSummary.rows(report, max_rows: @max_interval_lines, unlabelled: @unlabelled)
      rows.map do |row|
        f = { kind: kind, seq: Log::IntervalSummary.fetch(meta, :sequence) }
        f[@units == :ns ? :interval_ns : :interval_ms] = @units == :ns ? duration : duration && duration / 1e6
        row.labels.each { |k, v| f[:"label.#{k}"] = v }
        f[:label_sets] = row.folded if row.folded.positive?
        row.measurement.fields(@units, wall: false, f: f)
        f.merge!(drops)
        f
      end
    end

    # The report.json v1 Hash inside whatever report-like object is given.
    def self.report_hash(report)
      report = report.to_h if !report.is_a?(Hash) && report.respond_to?(:to_h)
      report = report[:report] if report.is_a?(Hash) && report[:report].is_a?(Hash)
      raise ArgumentError, "not a report: #{report.class}" unless report.is_a?(Hash)

      report
    end

    DEFAULT_SNAPSHOT = -> { Rperf.snapshot(clear: true) }

    # Starts writing interval lines every `every` seconds from a background
    # thread (a report of Rperf.snapshot(clear: true) each time; `snapshot:`
    # takes any callable returning a report). Returns self.
    def start_interval(every: 10, snapshot: nil)
      snap = snapshot || DEFAULT_SNAPSHOT
      raise ArgumentError, "snapshot must respond to #call" unless snap.respond_to?(:call)

      @timer_mutex.synchronize do
        raise ArgumentError, "interval logging already started" if @timer

        @snapshot = snap
        @timer = Log::IntervalTimer.new(every) { flush_interval }
      end
      self
    end

    # Takes one snapshot now and writes its lines. Never raises; returns the
    # number of lines written.
    def flush_interval
      snap = @snapshot || DEFAULT_SNAPSHOT
      report = snap.call
      report ? log_report(report) : 0
    rescue StandardError => e
      @sink.failed(e)
      0
    end

    # Stops the interval thread; with flush: true (default) the time since
    # the last tick is written too, so the series covers the whole run.
    # Call it before Rperf.stop. Returns the number of lines of the last flush.
    def stop_interval(flush: true)
      timer = @timer_mutex.synchronize do
        t = @timer
        @timer = nil
        t
      end
      return 0 unless timer

      timer.stop
      flush ? flush_interval : 0
    end

    def interval_running?
      @timer_mutex.synchronize { @timer&.running? || false }
    end

    # Waits until every line made so far is handed to the output (at most
    # `timeout` seconds; lines are written from a background thread unless
    # the log was made with async: false). Returns true when all were.
    # Lines still waiting for an after-reply hook are written first,
    # without their after_* fields.
    def flush(timeout = 1.0)
      @pending.keys.each { |unit| emit(unit, unit.end_read) if take_pending(unit) }
      @writer ? @writer.flush(timeout) : true
    end

    # Counters of the log itself.
    def stats
      @stats_mutex.synchronize do
        { lines: @writer ? @writer.accepted : @lines, errors: @sink.errors, label_sets: @label_cap.size,
          label_overflow: @label_cap.overflowed, counter_failures: @counter_failures,
          dropped_lines: @writer ? @writer.dropped : 0 }
      end
    end

    # Formats one field hash as a line of this log's format: the tag and
    # the process id first (workers of a forking server share one log).
    def format_line(fields)
      if @format == :json
        Log::Format.json({ msg: TAG, pid: Process.pid }.merge(fields))
      else
        "#{TAG} pid=#{Process.pid} #{Log::Format.logfmt(fields)}"
      end
    end

    private

    def new_unit(labels, kind, label_kw, read:)
      labels = if labels.nil? then label_kw
               elsif label_kw.empty? then labels
               else labels.to_h.merge(label_kw)
               end
      admitted, folded = @label_cap.admit_with_status(labels)
      unit = Unit.new(self, kind.to_s, admitted, read ? read_counters : nil)
      unit.capped = folded
      unit
    rescue StandardError => e
      @sink.failed(e)
      nil
    end

    def counted(unit)
      return yield(unit) unless unit

      begin_unit(unit, read_counters)
      begin
        yield unit
      ensure
        unit.end_counters(read_counters)
      end
    end

    # Runs the unit inside Rperf.profile (which resumes a profiler started
    # with defer: true for the unit's duration, so the thread's counters run
    # while it works) with the unit's labels, or only inside Rperf.label.
    def with_profiler(unit, &block)
      labels = @label && unit ? unit.labels : {}
      if @profile && Rperf.respond_to?(:profile)
        Rperf.profile { labelled(unit, labels, &block) }
      else
        labelled(unit, labels, &block)
      end
    end

    # Runs the block inside the unit's labels. Where it can, the label
    # switches themselves read the unit's counters (the block gets true):
    # reads of their own leave time between them and the switches (a GVL
    # hand-off, the thread preempted on a busy machine) that the label's
    # interval line counts and the unit's line would not.
    def labelled(unit, labels, &block)
      return block.call(false) if labels.empty? || !Rperf.respond_to?(:label)
      return Rperf.label(**labels) { block.call(false) } if @counters || !Rperf.respond_to?(:label_with_counters, true)

      Rperf.__send__(:label_with_counters, labels, self, unit) do |before|
        begin_unit(unit, before || read_counters)
        block.call(true)
      end
    end

    # The unit's end read from Rperf.label_with_counters (nil: read here).
    def end_unit_counters(unit, after)
      unit.end_counters(after || read_counters)
    end

    # The unit's counters start here; with before: its window before them.
    def begin_unit(unit, start)
      unit.begin_counters(start)
      unit.before_window = before_window(start) if unit.instance_variable_get(:@want_before)
    end

    def read_counters
      src = @counters
      unless src
        c = Rperf.thread_counters([])
        return c if c

        raise NotRunning, "no thread counters: the profiler is not running (call Rperf.start first)"
      end
      c = src.call
      raise NotRunning, "no thread counters: the profiler is not running (call Rperf.start first)" if c.nil?
      raise TypeError, "thread counters must be a Hash, got #{c.class}" unless c.is_a?(Hash) || c.is_a?(Array)

      c
    rescue StandardError => e
      @stats_mutex.synchronize { @counter_failures += 1 }
      @sink.failed(e, what: "reading thread counters")
      nil
    end

    # A unit whose line waits for its after-reply hook is written now,
    # without after_* fields, when its thread starts its next unit (the
    # server did not run the hook).
    # pending: the thread's last-end value, when the caller has read it.
    # True when a line was written (the value then changed).
    def flush_pending(pending = @last_ends[Thread.current])
      unit = if pending.is_a?(Unit) then pending
             elsif pending.is_a?(Array) && pending[0] == :pending then pending[1]
             end
      return false unless unit && take_pending(unit)

      emit(unit, unit.end_read)
      true
    end

    # A request's line that log_unit.c leaves to Ruby when no after-reply
    # hook was offered (C calls it). Never raises.
    def emit_ended(unit)
      emit(unit, nil)
    rescue StandardError => e
      @sink.failed(e)
    end

    # What log_unit.c rescued while writing a request's line.
    def c_failed(error)
      @sink.failed(error)
    end

    # The after-reply hook of the unit waiting on the calling thread.
    def complete_here
      unit = @last_ends[Thread.current]
      complete_after(unit) if unit.is_a?(Unit)
    end

    # The calling thread's last end (#initialize's @last_ends). A thread not
    # there yet first drops the entries of dead threads when the table
    # holds @last_ends_bound: the table stays within twice the threads alive.
    # Their list is taken whole before the first delete, as another thread
    # may add one meanwhile (log_unit.c calls this for a new thread).
    def last_end=(value)
      thread = Thread.current
      if @last_ends.size >= @last_ends_bound && !@last_ends.key?(thread)
        @last_ends.keys.reject(&:alive?).each { |dead| @last_ends.delete(dead) }
        @last_ends_bound = [LAST_ENDS_MIN, 2 * @last_ends.size].max
      end
      @last_ends[thread] = value
    end

    # True once for a pending unit: whoever takes it writes its line.
    def take_pending(unit)
      @pending.delete(unit)
    end

    # The line goes out; its end read is where this thread's next unit's
    # "before" may begin at the earliest.
    def emit(unit, end_read)
      if (reads = unit.reads)
        # The reads themselves: the next unit's begin takes its prior in C.
        self.last_end = reads if Thread.current == unit.thread
        if @writer && c_line?(unit)
          # Straight into the writer's queue: no String, no mutex.
          @writer.queued(Rperf.__send__(:_c_unit_push, reads, @writer.queue, Process.pid,
                                        line_prefix(unit.kind, unit.labels), unit.status,
                                        C_LINE_ENDS[@format], @c_unit_keys, @units == :ms))
          @metrics&.record(unit)
          return
        end
        line = unit_line(unit)
      else
        self.last_end = (end_read.is_a?(Array) ? end_read : nil) if Thread.current == unit.thread
        line = unit.result.states? ? unit_line(unit) : format_line(unit_fields(unit))
      end
      deliver(line)
      @metrics&.record(unit)
    end

    # The unit's before window from its start read (an Array): since the
    # thread last became runnable, or since its previous unit ended when it
    # has not blocked since.
    def before_window(start)
      window_before(start, @last_ends[Thread.current])
    end

    # The same from a given end of the previous unit (a thread_counters
    # Array, a Rperf::UnitReads, or anything else: none).
    def window_before(start, last)
      return nil unless start.is_a?(Array)

      last = Rperf.__send__(:_c_unit_read, last, 4) if last.is_a?(Rperf::UnitReads)
      last = nil unless last.is_a?(Array) && last[0].is_a?(Integer)
      since = last && last[Log::Measurement.layout[:clock]]
      Log::Measurement.since_runnable(start, since) || (last && Log::Measurement.between(last, start))
    end

    def measure_since(before, started_ns, after = read_counters)
      wall = Unit.clock(after) - started_ns
      Log::Measurement.between(before, after, wall)
    end

    # A unit counted in C whose line C writes whole: no field but its
    # numbers and an Integer status (or none).
    def c_line?(unit)
      !unit.capped && !unit.error && unit.extra_fields.empty? && ((status = unit.status).nil? || status.is_a?(Integer))
    end

    # The per-unit line without the generic field Hash: the start of the
    # line (tag, kind, labels) is cached per label set, which the label cap
    # keeps as one frozen object each, and the numbers are appended with
    # their fixed keys. Same keys and values as format_line(unit_fields(unit))
    # (logfmt: the same bytes).
    def unit_line(unit)
      prefix = line_prefix(unit.kind, unit.labels)
      if (reads = unit.reads) && c_line?(unit)
        return Rperf.__send__(:_c_unit_line, reads, prefix, unit.status, C_LINE_ENDS[@format], @c_unit_keys,
                              @units == :ms)
      end

      out = String.new(prefix, capacity: prefix.bytesize + 192)
      generic = nil
      generic = { label_capped: true } if unit.capped
      if !generic && (status = unit.status).is_a?(Integer)
        # The Rack status alone: no generic formatting needed.
        out << (@format == :json ? ",\"status\":" : " status=") << status.to_s
      elsif unit.status
        (generic ||= {})[:status] = unit.status
      end
      extra = unit.extra_fields
      (generic ||= {}).merge!(app_fields(extra)) unless extra.empty?
      (generic ||= {})[:error] = unit.error if unit.error
      if generic
        if @format == :json
          body = Log::Format.json(generic)
          out << "," << body[1, body.size - 2] if body.size > 2
        else
          out << " " << Log::Format.logfmt(generic)
        end
      end
      if (reads = unit.reads)
        Rperf.__send__(:_c_unit_append, reads, out, @c_unit_keys, @units == :ms)
      else
        append_numbers(out, unit.result)
        append_window(out, "before", unit.before_window) if unit.before_window&.states?
        append_window(out, "after", unit.after_window) if unit.after_window&.states?
      end
      out << "}" if @format == :json
      out
    end

    # WINDOW_KEYS[format][units][window]: the keys of a before/after window's
    # numbers, as append_window writes them (wall, running, GVL wait,
    # blocked, GC; ns units split GC into mark and sweep).
    WINDOW_KEYS = %i[logfmt json].to_h do |format|
      [format, %i[ms ns].to_h do |units|
        names = units == :ms ? %w[ms running_ms gvl_wait_ms blocked_ms gc_ms] : %w[wall_ns running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns]
        [units, %w[before after].to_h do |w|
          [w, names.map { |n| (format == :json ? ",\"#{w}_#{n}\":" : " #{w}_#{n}=").freeze }.freeze]
        end.freeze]
      end.freeze]
    end.freeze

    def append_window(out, window, m)
      keys = WINDOW_KEYS[@format][@units][window]
      if @units == :ns
        Rperf.__send__(:_c_append_numbers, out, false, keys, m.wall_ns, m.running_ns, m.gvl_wait_ns, m.blocked_ns,
                       m.gc_mark_ns, m.gc_sweep_ns)
      else
        Rperf.__send__(:_c_append_numbers, out, true, keys, m.wall_ns, m.running_ns, m.gvl_wait_ns, m.blocked_ns,
                       m.gc_mark_ns + m.gc_sweep_ns)
      end
    end

    PREFIX_CACHE_MAX = 10_000

    def line_prefix(kind, labels)
      if @prefix_pid != Process.pid # a forked child names itself
        @prefix_cache = {}
        @prefix_pid = Process.pid
      end
      by_labels = @prefix_cache[kind] ||= {}.compare_by_identity
      hit = by_labels[labels]
      return hit if hit

      fields = { kind: kind }
      labels.each { |k, v| fields[:"label.#{k}"] = v }
      prefix = format_line(fields)
      prefix = prefix[0, prefix.size - 1] if @format == :json
      prefix.freeze
      by_labels[labels] = prefix if by_labels.size < PREFIX_CACHE_MAX && labels.frozen?
      prefix
    end

    NUMBER_KEYS = {
      logfmt: { ms: %w[ wall_ms= running_ms= gvl_wait_ms= blocked_ms= gc_ms= gvl_wait_share= threads=],
                ns: %w[ wall_ns= running_ns= gvl_wait_ns= blocked_ns= gc_mark_ns= gc_sweep_ns=
                       gvl_wait_share= threads=] },
      json: { ms: %w[,"wall_ms": ,"running_ms": ,"gvl_wait_ms": ,"blocked_ms": ,"gc_ms": ,"gvl_wait_share":
                     ,"threads":],
              ns: %w[,"wall_ns": ,"running_ns": ,"gvl_wait_ns": ,"blocked_ns": ,"gc_mark_ns": ,"gc_sweep_ns":
                     ,"gvl_wait_share": ,"threads":] }
    }.freeze

    # blocked_<cause>_ms / _ns keys as NUMBER_KEYS spells its keys.
    CAUSE_NUMBER_KEYS = NUMBER_KEYS.to_h do |format, by_units|
      keys = by_units.to_h do |units, _|
        names = Log::Measurement::CAUSE_KEYS[units].transform_values do |key|
          (format == :json ? ",\"#{key}\":" : "#{key}=").freeze
        end
        [units, names.freeze]
      end
      [format, keys.freeze]
    end.freeze

    # The numbers in C (log_numbers.h): wall, running, GVL wait, blocked,
    # blocked by cause, GC, then the share and the thread count.
    # NUMBER_KEYS with the separator before each key, as _c_append_numbers
    # takes them: the first four, each cause's (an Array of one), the rest.
    line_keys = lambda do |pick|
      NUMBER_KEYS.to_h do |format, by_units|
        sep = format == :json ? "" : " "
        [format, by_units.to_h { |units, keys| [units, pick.(keys.map { |k| "#{sep}#{k}".freeze }, units)] }.freeze]
      end.freeze
    end
    LINE_NUMBER_KEYS = line_keys.(->(keys, _) { keys.first(4).freeze })
    LINE_TAIL_KEYS = line_keys.(->(keys, _) { keys.drop(4).freeze })
    LINE_CAUSE_KEYS = CAUSE_NUMBER_KEYS.to_h do |format, by_units|
      sep = format == :json ? "" : " "
      [format, by_units.transform_values { |keys| keys.transform_values { |k| ["#{sep}#{k}".freeze].freeze }.freeze }.freeze]
    end.freeze

    # Every key of a unit's numbers, as _c_unit_append takes them (log_unit.h).
    C_UNIT_KEYS = LINE_NUMBER_KEYS.to_h do |format, by_units|
      [format, by_units.to_h do |units, main|
        causes = Log::Measurement::CAUSES.map { |c| LINE_CAUSE_KEYS[format][units][c][0] }
        windows = WINDOW_KEYS[format][units]
        [units, [*main, *causes, *LINE_TAIL_KEYS[format][units], *windows["before"], *windows["after"]].freeze]
      end.freeze]
    end.freeze

    # What _c_unit_line writes around the numbers: the status key, the end.
    C_LINE_ENDS = { logfmt: [" status=", ""].freeze, json: [",\"status\":", "}"].freeze }.freeze

    def append_numbers(out, m)
      keys = LINE_NUMBER_KEYS[@format][@units]
      ms = @units == :ms
      Rperf.__send__(:_c_append_numbers, out, ms, keys, m.wall_ns, m.running_ns, m.gvl_wait_ns, m.blocked_ns)
      m.cause_fields.each { |c, ns| Rperf.__send__(:_c_append_numbers, out, ms, LINE_CAUSE_KEYS[@format][@units][c], ns) }
      tail = LINE_TAIL_KEYS[@format][@units]
      if ms
        Rperf.__send__(:_c_append_numbers, out, true, tail, m.gc_mark_ns + m.gc_sweep_ns)
      else
        Rperf.__send__(:_c_append_numbers, out, false, tail, m.gc_mark_ns, m.gc_sweep_ns)
      end
      out << tail[-2] << Log::Format.format_float(m.gvl_wait_share.round(3))
      out << tail[-1] << (m.threads == 1 ? "1" : m.threads.to_s)
    end

    def unit_fields(unit)
      f = { kind: unit.kind }
      unit.labels.each { |k, v| f[:"label.#{k}"] = v }
      f[:label_capped] = true if unit.capped
      f[:status] = unit.status if unit.status
      extra = unit.extra_fields
      f.merge!(app_fields(extra)) unless extra.empty?
      f[:error] = unit.error if unit.error
      unit.result.fields(@units, wall: true, f: f)
      window_fields(f, "before", unit.before_window)
      window_fields(f, "after", unit.after_window)
      f
    end

    def window_fields(f, window, m)
      return unless m&.states?

      WINDOW_KEYS[:logfmt][@units][window].zip(window_values(m)) { |key, v| f[key.strip.delete_suffix("=").to_sym] = v }
    end

    def window_values(m)
      if @units == :ns
        [m.wall_ns, m.running_ns, m.gvl_wait_ns, m.blocked_ns, m.gc_mark_ns, m.gc_sweep_ns]
      else
        [m.wall_ns, m.running_ns, m.gvl_wait_ns, m.blocked_ns, m.gc_mark_ns + m.gc_sweep_ns].map { |ns| Log::Measurement.ms(ns) }
      end
    end

    # The line's own field names, which application fields cannot take.
    OWN_FIELDS = (%w[msg pid kind label_capped status error] +
                  WINDOW_KEYS[:logfmt].values.flat_map(&:values).flatten.map { |k| k.strip.delete_suffix("=") } +
                  NUMBER_KEYS.values.flat_map(&:values).flatten.map { |k| k.delete(',":=') } +
                  Log::Measurement::CAUSE_KEYS.values.flat_map(&:values).map(&:to_s)).uniq.freeze

    # Application fields by their written name: one entry a name (the last
    # one set wins), app.<name> for a name the line uses itself.
    def app_fields(extra)
      out = {}
      extra.each do |key, value|
        name = Log::Format.safe_key(key)
        name = "app.#{name}" if OWN_FIELDS.include?(name) || name.start_with?("label.")
        out.delete(name)
        out[name] = value
      end
      out
    end

    def write(fields)
      deliver(format_line(fields))
    end

    # To the writer's queue (which counts the lines it takes), else to the
    # sink now. True unless the line was dropped.
    def deliver(line)
      return @writer.push(line) if @writer

      ok = @sink.deliver(line)
      @stats_mutex.synchronize { @lines += 1 } if ok
      ok
    end
  end

  # Runs the block as one unit of work labelled with `labels` and writes its
  # contention line to Rperf::ContentionLog.default. Returns the block's value.
  def self.log_contention(kind: "block", **labels, &block)
    raise ArgumentError, "Rperf.log_contention needs a block" unless block

    ContentionLog.default.measure(labels, kind: kind, &block)
  end
end

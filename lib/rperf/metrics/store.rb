# frozen_string_literal: true

# Rperf::Metrics::Store — one process's contention counters for one metrics
# directory (see rperf/metrics): per label set counters and histograms of
# the units a Rperf::ContentionLog finishes, and the whole process's own
# counters, written as rperf-PID-START.json (the format of
# common/metrics_format.h, docs/metrics.md) by a background thread every
# `interval` seconds and at exit. A forked child starts its own file; the
# parent's counts stay the parent's. It never raises into the program. It
# does NOT read other processes' files (the analysis library does).
require "fileutils"
require "json"
require_relative "../metrics"
require_relative "../utf8"

module Rperf
  module Metrics
    # One process's counters for one directory.
    class Store
      FORMAT = Rperf::METRICS_FORMAT
      CAUSES = FORMAT[:causes]
      WAIT_BOUNDS = FORMAT[:wait_bounds_ns]
      RATIO_BOUNDS = FORMAT[:ratio_bounds_permille]
      # A row: the unit count, wall, running, GVL wait, GC, blocked by cause,
      # the two histograms' buckets and the shares' sum in millionths.
      COUNT = 0
      WALL = 1
      RUNNING = 2
      WAIT = 3
      GC = 4
      BLOCKED = 5
      WAIT_BUCKETS = BLOCKED + CAUSES.size
      RATIO_BUCKETS = WAIT_BUCKETS + WAIT_BOUNDS.size + 1
      RATIO_SUM = RATIO_BUCKETS + RATIO_BOUNDS.size + 1
      ROW_SIZE = RATIO_SUM + 1
      CAUSE_INDEX = CAUSES.each_with_index.to_h { |c, i| [c, BLOCKED + i] }.freeze
      # Label sets beyond max_label_sets fold into buckets of "other" values,
      # at most this many shapes (key sets); the rest into one last bucket.
      MAX_OTHER_SHAPES = 16
      LAST_RESORT = ["other", { label: "other" }.freeze].freeze
      # Kinds whose rows are found by identity (frozen kinds, normally a few).
      IDENTITY_KINDS = 64
      FIELDS = Rperf::PROCESS_COUNTER_FIELDS
      PROCESS_STATES = %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].map { |k| FIELDS.index(k) }.freeze
      PROCESS_CAUSES = CAUSES.map { |c| FIELDS.index(:"blocked_#{c}_ns") }.freeze
      PROCESS_DROPS = FORMAT[:drops].map { |d| FIELDS.index(:"dropped_#{d}") }.freeze

      attr_reader :dir, :interval, :max_label_sets

      def initialize(dir, interval: DEFAULT_INTERVAL, max_label_sets: 1000)
        unless interval.is_a?(Numeric) && interval >= 0.01
          raise ArgumentError, "interval: #{interval.inspect} is invalid; expected seconds >= 0.01"
        end
        unless max_label_sets.is_a?(Integer) && max_label_sets >= 1 && max_label_sets <= FORMAT[:max_rows] - MAX_OTHER_SHAPES - 1
          raise ArgumentError, "max_label_sets: #{max_label_sets.inspect} is invalid; expected 1 to #{FORMAT[:max_rows] - MAX_OTHER_SHAPES - 1}"
        end

        @dir = File.expand_path(dir)
        @interval = interval.to_f
        @max_label_sets = max_label_sets
        @mutex = Mutex.new
        @wake = ConditionVariable.new
        @pid = nil
        @thread = nil
        @closed = false
        @errors = 0
        @writes = 0
        @warned = false
      end

      # Counts one finished unit (a ContentionLog::Unit). Never raises.
      def record(unit)
        start_process unless @pid == Process.pid
        m = unit.result
        unless m&.states?
          @mutex.synchronize { @unmeasured += 1 }
          return
        end

        wall = m.wall_ns
        running = m.running_ns
        wait = m.gvl_wait_ns
        blocked = m.blocked_ns
        gc = m.gc_mark_ns + m.gc_sweep_ns
        causes = m.blocked_by_cause
        before = unit.before_window
        after = unit.after_window
        if before&.states?
          wall += before.wall_ns
          running += before.running_ns
          wait += before.gvl_wait_ns
          gc += before.gc_mark_ns + before.gc_sweep_ns
          blocked += before.blocked_ns # 0 by definition
        end
        if after&.states?
          wall += after.wall_ns
          running += after.running_ns
          wait += after.gvl_wait_ns
          blocked += after.blocked_ns
          gc += after.gc_mark_ns + after.gc_sweep_ns
        end
        total = running + wait + blocked + gc
        wait_bucket = WAIT_BOUNDS.bsearch_index { |b| b >= wait } || WAIT_BOUNDS.size
        ratio_bucket = RATIO_BOUNDS.bsearch_index { |b| wait * 1000 <= b * total } || RATIO_BOUNDS.size
        ppm = total.zero? ? 0 : wait * 1_000_000 / total
        @mutex.synchronize do
          row = row_for(unit.kind, unit.labels)
          @folded += 1 if unit.capped
          row[COUNT] += 1
          row[WALL] += wall
          row[RUNNING] += running
          row[WAIT] += wait
          row[GC] += gc
          named = add_causes(row, causes)
          named += add_causes(row, after.blocked_by_cause) if after&.states?
          row[BLOCKED] += blocked - named if blocked > named # time no cause names: unknown
          row[WAIT_BUCKETS + wait_bucket] += 1
          row[RATIO_BUCKETS + ratio_bucket] += 1
          row[RATIO_SUM] += ppm
        end
        nil
      rescue StandardError => e
        failed(e, "counting a unit")
        nil
      end

      # Writes this process's file now. Never raises; true when written.
      def flush
        return false unless @pid == Process.pid && !@closed

        json = JSON.generate(document)
        begin
          File.write(@tmp, json)
        rescue Errno::ENOENT # the directory was removed: made again, once
          prepare_dir
          File.write(@tmp, json)
        end
        File.rename(@tmp, @path)
        @mutex.synchronize { @writes += 1 }
        true
      rescue StandardError => e
        failed(e, "writing #{@path}")
        false
      end

      # Stops the writer thread after one last write; later units are
      # counted but not written. Returns true when written.
      def close
        thread = @mutex.synchronize do
          t = @thread
          @thread = nil
          @wake.signal
          t
        end
        thread&.join(2) if thread && thread != Thread.current
        written = flush
        @closed = true
        written
      end

      # { writes:, errors:, label_sets:, folded: } of this process.
      def stats
        @mutex.synchronize do
          { writes: @writes, errors: @errors, label_sets: @rows ? @rows.size : 0, folded: @folded || 0 }
        end
      end

      # This process's file (nil before its first unit).
      def path
        @pid == Process.pid ? @path : nil
      end

      private

      # The first unit in this process (or after a fork: the parent's rows
      # are the parent's): a file name of its own and a writer thread.
      def start_process
        @mutex.synchronize do
          return if @pid == Process.pid

          @pid = Process.pid
          @rows = {}
          @by_identity = {}.compare_by_identity
          @other_shapes = {}
          @folded = 0
          @unmeasured = 0
          @process_base = Array.new(FIELDS.size, 0)
          @process_last = Array.new(FIELDS.size, 0)
          @process_generation = Rperf.__send__(:generation)
          @start_ticks = self.class.start_ticks
          name = "rperf-#{@pid}-#{@start_ticks}.json"
          @path = File.join(@dir, name)
          @tmp = File.join(@dir, ".#{name}.tmp")
          prepare_dir
          @thread = thread = Thread.new { run }
          thread.name = "rperf-metrics"
          thread.report_on_exception = false
          unless @exit_hook
            @exit_hook = true
            store = self
            at_exit { store.flush }
          end
        end
      end

      def prepare_dir
        FileUtils.mkdir_p(@dir) unless File.directory?(@dir)
        # The readers' lock file (docs/metrics.md, "The directory").
        lock = File.join(@dir, "rperf.lock")
        File.open(lock, File::CREAT | File::WRONLY, 0o666, &:itself) unless File.exist?(lock)
      rescue StandardError => e
        failed(e, "preparing #{@dir}")
      end

      def run
        me = Thread.current
        loop do
          @mutex.synchronize { @wake.wait(@mutex, @interval) if @thread == me }
          break unless @thread == me

          flush
        end
      end

      # Process start time in clock ticks (/proc/self/stat field 22), 0 unknown.
      def self.start_ticks
        stat = File.read("/proc/self/stat")
        Integer(stat[(stat.rindex(")") + 2)..].split(" ")[19])
      rescue StandardError
        0
      end

      # Called with the mutex held: the row of (kind, labels). Frozen kinds
      # and label Hashes (what the log's cap hands out, one object per set)
      # are found by identity, the rest by content.
      def row_for(kind, labels)
        cache = kind.frozen? && labels.frozen? ? @by_identity[kind] : nil
        row = cache && cache[labels]
        return row if row

        row = row_by_content(kind, labels)
        return row unless kind.frozen? && labels.frozen?

        cache ||= (@by_identity[kind] = {}.compare_by_identity) if @by_identity.size < IDENTITY_KINDS
        cache[labels] = row if cache && cache.size < @max_label_sets * 4
        row
      end

      # A label set beyond the cap goes to the "other" bucket of its keys
      # (at most MAX_OTHER_SHAPES of them, then one last bucket) and is
      # counted; the rows stay bounded whatever the kinds and labels.
      def row_by_content(kind, labels)
        row = @rows[[kind, labels]]
        return row if row
        return @rows[[kind.dup.freeze, labels.dup.freeze].freeze] = Array.new(ROW_SIZE, 0) if @rows.size < @max_label_sets

        @folded += 1
        other = @other_shapes[labels.keys]
        if !other && @other_shapes.size < MAX_OTHER_SHAPES
          other = @other_shapes[labels.keys.freeze] = labels.transform_values { "other" }.freeze
        end
        key = other && @rows.size < @max_label_sets + MAX_OTHER_SHAPES ? [kind.dup.freeze, other] : LAST_RESORT
        @rows[key.frozen? ? key : key.freeze] ||= Array.new(ROW_SIZE, 0)
      end

      # Adds a { cause => ns } Hash into the row; returns the ns added.
      def add_causes(row, causes)
        return 0 unless causes

        named = 0
        causes.each do |cause, ns|
          at = CAUSE_INDEX[cause] || CAUSE_INDEX[:other]
          row[at] += ns
          named += ns
        end
        named
      end

      def document
        rows, folded, unmeasured = @mutex.synchronize do
          [@rows.map { |(kind, labels), row| [kind, labels, row.dup] }, @folded, @unmeasured]
        end
        {
          format: FORMAT[:name], version: FORMAT[:version], pid: @pid, start_ticks: @start_ticks,
          process: process_fields(folded, unmeasured),
          units: rows.map { |kind, labels, row| unit_fields(kind, labels, row) }
        }
      end

      def unit_fields(kind, labels, row)
        {
          kind: text(kind), labels: label_fields(labels), count: row[COUNT], wall_ns: row[WALL],
          running_ns: row[RUNNING], gvl_wait_ns: row[WAIT], gc_ns: row[GC],
          blocked_ns: row[BLOCKED, CAUSES.size],
          gvl_wait_buckets: row[WAIT_BUCKETS, WAIT_BOUNDS.size + 1],
          gvl_wait_ratio_buckets: row[RATIO_BUCKETS, RATIO_BOUNDS.size + 1],
          gvl_wait_ratio_sum_ppm: row[RATIO_SUM]
        }
      end

      # Labels as the reader takes them: at most max_labels, names without
      # NUL bytes, names and values of at most max_text bytes.
      def label_fields(labels)
        out = {}
        labels.each do |k, v|
          break if out.size == FORMAT[:max_labels]

          name = text(k.to_s)
          out[name.empty? ? "label" : name] = text(v.to_s, nul: true)
        end
        out
      end

      def text(value, nul: false)
        s = UTF8.scrub(value)
        s = s.tr("\0", "\uFFFD") unless nul || !s.include?("\0")
        s.bytesize > FORMAT[:max_text] ? s.byteslice(0, FORMAT[:max_text]).scrub("") : s
      end

      # The whole process's counters, never going back: a new profile (its
      # counters start from zero) adds the last one's values to a base, and
      # within one profile a value is never taken below the last (a slot
      # read while its writer was busy).
      def process_fields(folded, unmeasured)
        now = Rperf.__send__(:_c_process_counters, [])
        generation = Rperf.__send__(:generation)
        if now
          restarted = generation != @process_generation
          @process_generation = generation
          now.each_with_index do |v, i|
            if restarted
              @process_base[i] += @process_last[i]
              @process_last[i] = v
            elsif v > @process_last[i]
              @process_last[i] = v
            end
          end
        end
        total = ->(i) { @process_base[i] + @process_last[i] }
        dropped = PROCESS_DROPS.map { |i| i ? total.(i) : 0 }
        dropped[-1] = Rperf.__send__(:dropped_label_sets)
        states = PROCESS_STATES.map { |i| total.(i) }
        {
          threads: now ? now[FIELDS.index(:threads)] : Thread.list.size,
          running_ns: states[0], gvl_wait_ns: states[1], gc_ns: states[3] + states[4],
          blocked_ns: PROCESS_CAUSES.map { |i| total.(i) }, dropped: dropped,
          label_sets_folded: folded, units_unmeasured: unmeasured
        }
      end

      def failed(error, what)
        first = @mutex.synchronize do
          @errors += 1
          was = @warned
          @warned = true
          !was
        end
        return unless first

        begin
          $stderr.write("rperf: metrics: #{what} failed: #{error.class}: #{error.message} " \
                        "(further failures are counted, not printed; the program continues)\n")
        rescue StandardError
          nil
        end
      end
    end
  end
end

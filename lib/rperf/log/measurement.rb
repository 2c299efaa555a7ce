# frozen_string_literal: true

# Rperf::Log::Measurement is one unit of work's contention numbers: wall
# time and the time its thread spent in each state (the same states and
# names as report.json's threads section), taken as the difference of two
# reads of the thread's own cumulative counters: Arrays of
# Rperf.thread_counters (the cheap form) or Hashes of
# Rperf.thread_contention. Wall time is the difference of the two reads'
# clock readings, so the states add up to it exactly.
# Because each thread only reads its own counters, requests that overlap on
# different threads are never counted twice. It does NOT read counters or
# write lines itself.
#
# blocked_by_cause ({ mutex: ns, ... }, nil when the counters have none):
# blocked_ns split by cause, from the counters' `blocked_by_cause` (Symbol or
# String keys; a cause name not in CAUSES counts as :other). The log writes
# one `blocked_<cause>_ms` field per nonzero cause, in CAUSES order.
module Rperf
  module Log
    class Measurement < Struct.new(:wall_ns, :running_ns, :gvl_wait_ns, :blocked_ns, :gc_mark_ns, :gc_sweep_ns,
                                   :threads, :blocked_by_cause)
      # Nanoseconds as the Float of milliseconds a line writes: rounded to
      # whole microseconds first, half up, as log_numbers.c does, so that
      # the generic line and the C numbers agree when ns ends in 500.
      def self.ms(ns)
        return nil if ns.nil?
        return ns / 1_000_000.0 if ns.negative?

        ((ns + 500) / 1000) / 1000.0
      end

      # report.json's per-thread state keys, in report order.
      STATE_KEYS = %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze
      # The blocked causes in report.json's order (docs/report-format.md).
      CAUSES = %i[unknown io sleep mutex condvar queue join ractor process other].freeze
      # Their log field names, by units.
      CAUSE_KEYS = {
        ms: CAUSES.to_h { |c| [c, :"blocked_#{c}_ms"] }.freeze,
        ns: CAUSES.to_h { |c| [c, :"blocked_#{c}_ns"] }.freeze
      }.freeze

      # Builds the difference `after - before` of two counter reads (Arrays
      # of Rperf.thread_counters, or Hashes with Symbol or String keys).
      # Counters are cumulative, so a negative difference can only come from
      # a reset (the profiler was restarted in between); it is clamped to 0.
      # wall_ns is used when the reads carry no clock reading. Returns a
      # Measurement without state numbers when either read is missing.
      def self.between(before, after, wall_ns = nil)
        return from_arrays(before, after) if before.is_a?(Array) && after.is_a?(Array)

        clock_b = before && counter(before, :monotonic_ns)
        clock_a = after && counter(after, :monotonic_ns)
        wall_ns = clock_a - clock_b if clock_b&.positive? && clock_a&.positive?
        m = new(wall_ns: wall_ns, threads: 1)
        return m unless before && after

        STATE_KEYS.each do |k|
          delta = counter(after, k) - counter(before, k)
          m[k] = delta < 0 ? 0 : delta
        end
        m.blocked_by_cause = cause_delta(causes(before), causes(after))
        m
      end

      # Positions in a Rperf.thread_counters Array (Rperf::COUNTER_FIELDS,
      # read once the extension is loaded: only it makes such Arrays).
      def self.layout
        @layout ||= {
          clock: Rperf::COUNTER_FIELDS.index(:monotonic_ns),
          states: STATE_KEYS.map { |k| Rperf::COUNTER_FIELDS.index(k) }.freeze,
          runnable: Rperf::COUNTER_FIELDS.index(:runnable_ns),
          runnable_states: STATE_KEYS.map { |k| Rperf::COUNTER_FIELDS.index(:"runnable_#{k}") }.freeze,
          causes: CAUSES.map { |c| Rperf::COUNTER_FIELDS.index(:"blocked_#{c}_ns") }.freeze
        }.freeze
      end

      NO_CAUSES = {}.freeze
      NO_CAUSE_FIELDS = [].freeze

      # Once per unit, so written out: the states are contiguous in the
      # Array (layout), and causes are looked at only when it blocked.
      def self.from_arrays(b, a)
        s = @state_at ||= layout[:states][0]
        run = a[s] - b[s]
        wait = a[s + 1] - b[s + 1]
        blocked = a[s + 2] - b[s + 2]
        mark = a[s + 3] - b[s + 3]
        sweep = a[s + 4] - b[s + 4]
        new(a[0] - b[0], run < 0 ? 0 : run, wait < 0 ? 0 : wait, blocked < 0 ? 0 : blocked, mark < 0 ? 0 : mark,
            sweep < 0 ? 0 : sweep, 1, blocked > 0 ? causes_between(b, a) : NO_CAUSES)
      end

      def self.causes_between(b, a)
        causes = {}
        layout[:causes].each_with_index do |at, i|
          delta = a[at] - b[at]
          causes[CAUSES[i]] = delta if delta > 0
        end
        causes
      end

      # What a thread went through from its last becoming runnable after
      # blocking (its data arrived) to the read `now` (an Array), when that
      # was at or after `since_ns` (the clock reading of the end of the
      # thread's previous unit, or nil); else nil. None of it is blocked.
      def self.since_runnable(now, since_ns)
        l = layout
        at = now[l[:runnable]]
        return nil unless at.positive? && (since_ns.nil? || at >= since_ns)

        m = new(wall_ns: now[l[:clock]] - at, threads: 1)
        STATE_KEYS.each_with_index do |k, i|
          delta = now[l[:states][i]] - now[l[:runnable_states][i]]
          m[k] = delta < 0 ? 0 : delta
        end
        m
      end

      # A counters' or report row's blocked_by_cause as { cause Symbol => ns },
      # or nil when it has none.
      def self.causes(hash)
        raw = hash[:blocked_by_cause] || hash["blocked_by_cause"]
        return nil unless raw.is_a?(Hash)

        raw.each_with_object(Hash.new(0)) do |(cause, ns), out|
          name = cause.to_sym
          out[CAUSES.include?(name) ? name : :other] += ns.to_i if ns.is_a?(Numeric)
        end
      end

      # after - before per cause, nonzero and non-negative; nil unless both are known.
      def self.cause_delta(before, after)
        return nil unless before && after

        after.each_with_object({}) do |(cause, ns), out|
          delta = ns - before[cause]
          out[cause] = delta if delta.positive?
        end
      end

      def self.counter(hash, key)
        v = hash[key]
        return v if v.is_a?(Integer)

        v = hash[key.to_s] if v.nil?
        v.is_a?(Numeric) ? v.to_i : 0
      end

      def states?
        !running_ns.nil?
      end

      def gc_ns
        states? ? gc_mark_ns + gc_sweep_ns : nil
      end

      # Thread time in all states; for one thread about equal to wall_ns.
      def total_ns
        states? ? running_ns + gvl_wait_ns + blocked_ns + gc_mark_ns + gc_sweep_ns : nil
      end

      # Fraction of the thread time spent waiting for the GVL (0.0..1.0).
      def gvl_wait_share
        t = total_ns
        return nil unless t

        t.zero? ? 0.0 : gvl_wait_ns.fdiv(t)
      end

      # Adds another measurement (used to sum interval rows).
      def add!(other)
        self.wall_ns = (wall_ns || 0) + (other.wall_ns || 0) if wall_ns || other.wall_ns
        STATE_KEYS.each { |k| self[k] = (self[k] || 0) + (other[k] || 0) }
        self.threads = (threads || 0) + (other.threads || 0)
        add_causes!(other.blocked_by_cause)
        self
      end

      # Adds a { cause => ns } Hash into blocked_by_cause.
      def add_causes!(causes)
        return self unless causes

        sum = blocked_by_cause ? blocked_by_cause.dup : {}
        causes.each { |cause, ns| sum[cause] = sum.fetch(cause, 0) + ns }
        self.blocked_by_cause = sum
        self
      end

      # [[cause, ns], ...] of the nonzero causes, in CAUSES order.
      def cause_fields
        causes = blocked_by_cause
        return NO_CAUSE_FIELDS if causes.nil? || causes.empty?

        CAUSES.filter_map { |c| (ns = causes[c]) && ns.positive? ? [c, ns] : nil }
      end

      # Plain numbers for the application (env["rperf.contention"].to_h).
      def to_h
        h = super.compact
        if states?
          h[:gc_ns] = gc_ns
          h[:total_ns] = total_ns
          h[:gvl_wait_share] = gvl_wait_share
        end
        h
      end

      # The log fields, in the documented order. units: :ms (floats, 3
      # decimals, GC as one gc_ms) or :ns (integers, report.json's names).
      # wall: whether wall time is meaningful (false for interval sums).
      # Appends to `f` when given (one Hash per line, no merging).
      def fields(units, wall: true, f: {})
        if units == :ns
          f[:wall_ns] = wall_ns if wall
          if states?
            f[:total_ns] = total_ns unless wall
            STATE_KEYS.each do |k|
              f[k] = self[k]
              cause_fields.each { |c, ns| f[CAUSE_KEYS[:ns][c]] = ns } if k == :blocked_ns
            end
          end
        else
          f[:wall_ms] = ms(wall_ns) if wall
          if states?
            f[:total_ms] = ms(total_ns) unless wall
            f[:running_ms] = ms(running_ns)
            f[:gvl_wait_ms] = ms(gvl_wait_ns)
            f[:blocked_ms] = ms(blocked_ns)
            cause_fields.each { |c, ns| f[CAUSE_KEYS[:ms][c]] = ms(ns) }
            f[:gc_ms] = ms(gc_ns)
          end
        end
        f[:gvl_wait_share] = gvl_wait_share.round(3) if states?
        f[:threads] = threads
        f
      end

      private

      def ms(ns)
        Measurement.ms(ns)
      end
    end
  end
end

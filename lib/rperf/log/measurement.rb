# frozen_string_literal: true

# Rperf::Log::Measurement is one unit of work's contention numbers: wall
# time and the time its thread spent in each state (the same states and
# names as report.json's threads section), taken as the difference of two
# reads of the thread's own cumulative counters (Rperf.thread_contention).
# Because each thread only reads its own counters, requests that overlap on
# different threads are never counted twice. It does NOT read counters or
# write lines itself.
module Rperf
  module Log
    class Measurement < Struct.new(:wall_ns, :running_ns, :gvl_wait_ns, :blocked_ns, :gc_mark_ns, :gc_sweep_ns,
                                   :threads, keyword_init: true)
      # report.json's per-thread state keys, in report order.
      STATE_KEYS = %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].freeze

      # Builds the difference `after - before` of two counter hashes (Symbol
      # or String keys). Counters are cumulative, so a negative difference
      # can only come from a reset (the profiler was restarted in between);
      # it is clamped to 0. Returns a Measurement without state numbers when
      # either read is missing.
      def self.between(before, after, wall_ns)
        m = new(wall_ns: wall_ns, threads: 1)
        return m unless before && after

        STATE_KEYS.each do |k|
          delta = counter(after, k) - counter(before, k)
          m[k] = delta < 0 ? 0 : delta
        end
        m
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
        self
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
            STATE_KEYS.each { |k| f[k] = self[k] }
          end
        else
          f[:wall_ms] = ms(wall_ns) if wall
          if states?
            f[:total_ms] = ms(total_ns) unless wall
            f[:running_ms] = ms(running_ns)
            f[:gvl_wait_ms] = ms(gvl_wait_ns)
            f[:blocked_ms] = ms(blocked_ns)
            f[:gc_ms] = ms(gc_ns)
          end
        end
        f[:gvl_wait_share] = gvl_wait_share.round(3) if states?
        f[:threads] = threads
        f
      end

      private

      def ms(ns)
        ns.nil? ? nil : ns / 1_000_000.0
      end
    end
  end
end

# frozen_string_literal: true

require_relative "measurement"

# Rperf::Log::IntervalSummary reads one report hash (the report.json v1
# shape, as returned by Rperf.snapshot(clear: true)) and sums its
# label_totals per label set: one row per label set with the state totals
# of every thread that carried it and the number of such threads. Rows are
# ordered by total time, largest first; beyond `max_rows` the rest are
# folded into one "other" row whose `folded` tells how many sets it holds.
#
# Rperf::Log::IntervalTimer runs a block every N seconds on one background
# thread and can be stopped promptly. Neither writes log lines.
module Rperf
  module Log
    module IntervalSummary
      Row = Struct.new(:label_set, :labels, :measurement, :folded, keyword_init: true)

      module_function

      # Reads a key of a report hash whether it was built with String keys
      # (JSON) or Symbol keys (Ruby).
      def fetch(hash, key)
        return nil unless hash.is_a?(Hash)

        hash.key?(key) ? hash[key] : hash[key.to_s]
      end

      def rows(report, max_rows: 100, unlabelled: true)
        labels_by_id = {}
        Array(fetch(report, :label_sets)).each do |set|
          labels_by_id[fetch(set, :id)] = (fetch(set, :labels) || {}).transform_keys(&:to_sym)
        end

        sums = {}
        threads = Hash.new { |h, k| h[k] = {} }
        Array(fetch(report, :label_totals)).each do |row|
          id = fetch(row, :label_set)
          next if !unlabelled && id.zero?

          m = (sums[id] ||= Measurement.new(running_ns: 0, gvl_wait_ns: 0, blocked_ns: 0,
                                            gc_mark_ns: 0, gc_sweep_ns: 0, threads: 0))
          Measurement::STATE_KEYS.each { |k| m[k] += fetch(row, k).to_i }
          m.add_causes!(Measurement.causes(row))
          threads[id][fetch(row, :thread)] = true
        end
        sums.each { |id, m| m.threads = threads[id].size }

        ordered = sums.sort_by { |id, m| [-m.total_ns, id] }
        kept = ordered.first(max_rows).map do |id, m|
          Row.new(label_set: id, labels: labels_by_id[id] || {}, measurement: m, folded: 0)
        end
        rest = ordered.drop(max_rows)
        unless rest.empty?
          other = Measurement.new(running_ns: 0, gvl_wait_ns: 0, blocked_ns: 0, gc_mark_ns: 0,
                                  gc_sweep_ns: 0, threads: 0)
          rest.each { |_, m| other.add!(m) }
          # The same thread can appear under several folded sets; count it once.
          other.threads = rest.flat_map { |id, _| threads[id].keys }.uniq.size
          kept << Row.new(label_set: nil, labels: { other: "true" }, measurement: other, folded: rest.size)
        end
        kept
      end

      # Non-zero drop counters of the report's stats, for the log line.
      def drops(report)
        stats = fetch(report, :stats) || {}
        out = {}
        stats.each do |k, v|
          out[k.to_sym] = v if k.to_s.start_with?("dropped_") && v.is_a?(Integer) && v.positive?
        end
        out
      end
    end

    class IntervalTimer
      def initialize(every, name: "rperf-contention-log", &tick)
        unless every.is_a?(Numeric) && every.positive?
          raise ArgumentError, "interval must be a positive number of seconds, got #{every.inspect}"
        end

        @every = every.to_f
        @tick = tick
        @mutex = Mutex.new
        @wake = ConditionVariable.new
        @stopping = false
        @thread = Thread.new do
          Thread.current.name = name
          Thread.current.report_on_exception = false
          run
        end
      end

      def running?
        @thread.alive?
      end

      # Stops the timer and waits for a tick in progress to finish.
      def stop
        @mutex.synchronize do
          @stopping = true
          @wake.signal
        end
        @thread.join unless Thread.current == @thread
        nil
      end

      private

      def run
        deadline = now + @every
        loop do
          @mutex.synchronize do
            until @stopping || now >= deadline
              @wake.wait(@mutex, deadline - now)
            end
          end
          break if @mutex.synchronize { @stopping }

          deadline += @every
          deadline = now + @every if deadline < now # fell behind: don't burst
          @tick.call
        end
      end

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end
    end
  end
end

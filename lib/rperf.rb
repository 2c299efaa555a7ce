# frozen_string_literal: true

# Rperf — the Ruby face of the extension: start/stop/running?, snapshot,
# labels and the profile refcount, and the conversion of the extension's
# report (report.json v1, String keys) into the classic result hash.
# Keyword validation lives here (and in Rperf::SamplerOptions); the C
# methods (`_c_*`) are private and take already-validated values.
# It does NOT render reports (Rperf::Contention::Report does) and does NOT
# write log lines (rperf/contention_log).
#
# Ractors: start/stop/snapshot/label/profile are for the main Ractor (the
# label registry is module state); threads of other Ractors are measured
# all the same.
require_relative "rperf/version"
begin
  require "rperf/rperf_ext"
rescue LoadError
  require "rperf_ext"
end
require_relative "rperf/sampler_options"

module Rperf
  # Capacity options and their defaults: Rperf::LIMITS (defined by the
  # extension from its one header of limits) is the source of every number.
  CONTENTION_DEFAULTS = {
    timeline: true,
    max_threads: LIMITS[:max_threads][:default],
    max_intervals: LIMITS[:max_intervals][:default],
    min_interval_ns: LIMITS[:min_interval_ns][:default],
    max_edges: LIMITS[:max_edges][:default]
  }.freeze

  # Label sets beyond this many distinct ones are counted, not registered.
  MAX_LABEL_SETS = LIMITS[:max_label_sets][:default]

  @label_mutex = Mutex.new
  @label_sets = [{}.freeze]
  @label_ids = { {} => 0 }
  @dropped_label_sets = 0
  @output = nil

  class << self
    # Starts profiling. Sampler keywords: frequency:, mode: (:cpu, :wall),
    # aggregate:, signal:, defer:, output:. Contention keywords: timeline:,
    # max_threads:, max_intervals:, min_interval_ns:, max_edges:.
    # Returns true. Raises when already running or when called from a
    # non-main Ractor.
    def start(timeline: CONTENTION_DEFAULTS[:timeline],
              max_threads: CONTENTION_DEFAULTS[:max_threads],
              max_intervals: CONTENTION_DEFAULTS[:max_intervals],
              min_interval_ns: CONTENTION_DEFAULTS[:min_interval_ns],
              max_edges: CONTENTION_DEFAULTS[:max_edges],
              **sampler)
      check_main_ractor!(:start)
      opts = SamplerOptions.normalize(**sampler)
      config = {
        frequency: opts[:frequency], mode: opts[:mode], aggregate: opts[:aggregate],
        signal: opts[:signal], defer: opts[:defer],
        timeline: check_boolean(:timeline, timeline),
        max_threads: check_count(:max_threads, max_threads),
        max_intervals: check_count(:max_intervals, max_intervals),
        min_interval_ns: check_count(:min_interval_ns, min_interval_ns),
        max_edges: check_count(:max_edges, max_edges)
      }
      raise StateError, "rperf: already running (call Rperf.stop first)" if running?

      @label_mutex.synchronize do
        @label_sets = [{}.freeze]
        @label_ids = { {} => 0 }
        @dropped_label_sets = 0
      end
      @output = opts[:output]
      _c_start(config, Thread.list)
    end

    # Stops profiling; returns the result hash (see build_result), or nil
    # when not running. Writes it to output: when start was given one.
    def stop
      check_main_ractor!(:stop)
      report = _c_stop
      return nil unless report

      result = build_result(finish_report(report))
      write_output(result) if @output
      result
    end

    # The report.json v1 Hash of the run, stopping it (used by contention).
    def stop_report
      report = _c_stop
      report && finish_report(report)
    end

    def running?
      _c_running?
    end

    # Result so far without stopping; with clear: true the next snapshot
    # covers only the time after this one. nil when not running.
    def snapshot(clear: false)
      report = snapshot_report(clear: clear)
      report && build_result(report)
    end

    def snapshot_report(clear: false)
      check_main_ractor!(:snapshot)
      report = _c_snapshot(clear ? true : false)
      report && finish_report(report)
    end

    # Labels of the current thread. With a block: merged into the current
    # labels for the block (nil values delete keys), restored afterwards.
    # Without: set from now on. Returns the block's value or the labels.
    def label(**labels, &block)
      previous = labels()
      merged = previous.merge(normalize_labels(labels)).compact
      if block
        begin
          _c_set_label(label_set_id(merged))
          yield
        ensure
          _c_set_label(label_set_id(previous))
        end
      else
        _c_set_label(label_set_id(merged))
        merged
      end
    end

    # The current thread's labels (a frozen Hash, Symbol keys, String values).
    def labels
      id = _c_get_label
      @label_mutex.synchronize { @label_sets[id] || {} }
    end

    # Profiles the block (resumes a deferred profile for its duration; the
    # refcount makes nesting and concurrent threads safe), with labels.
    def profile(**labels, &block)
      raise ArgumentError, "Rperf.profile needs a block" unless block
      return (labels.empty? ? yield : label(**labels, &block)) unless running?

      _c_profile_inc
      begin
        labels.empty? ? yield : label(**labels, &block)
      ensure
        _c_profile_dec if running?
      end
    end

    # The current thread's cumulative state totals in this profile:
    # { running_ns:, gvl_wait_ns:, blocked_ns:, gc_mark_ns:, gc_sweep_ns:,
    #   monotonic_ns: }, read from its own slot (cheap). monotonic_ns is the
    # CLOCK_MONOTONIC reading the totals were taken at, so between two reads
    # the state differences add up to the monotonic_ns difference exactly.
    # nil when not profiling.
    def thread_contention
      _c_thread_contention
    end

    # The frozen labels Hash of a label set id, or nil.
    def label_set(id)
      @label_mutex.synchronize { @label_sets[id] }
    end

    private

    def check_main_ractor!(what)
      return if Ractor.current == Ractor.main

      raise StateError, "rperf: #{what} must be called from the main Ractor"
    end

    def check_boolean(name, value)
      return value if value == true || value == false

      raise ArgumentError, "#{name}: #{value.inspect} is invalid; expected true or false"
    end

    def check_count(name, value)
      min, max = LIMITS[name].values_at(:min, :max)
      return value if value.is_a?(Integer) && value >= min && value <= max

      raise ArgumentError, "#{name}: #{value.inspect} is invalid; expected an Integer from #{min} to #{max}"
    end

    def normalize_labels(labels)
      labels.each_with_object({}) do |(k, v), h|
        h[k.to_sym] = v.nil? ? nil : v.to_s.freeze
      end
    end

    def label_set_id(labels)
      return 0 if labels.empty?

      @label_mutex.synchronize do
        @label_ids.fetch(labels) do
          if @label_sets.size >= MAX_LABEL_SETS
            @dropped_label_sets += 1
            next 0
          end
          frozen = labels.dup.freeze
          @label_sets << frozen
          @label_ids[frozen] = @label_sets.size - 1
        end
      end
    end

    # Adds the Ruby-side parts to the extension's report: label sets and
    # their drop counter.
    def finish_report(report)
      sets, dropped = @label_mutex.synchronize { [@label_sets.dup, @dropped_label_sets] }
      report["label_sets"] = sets.each_with_index.map do |labels, id|
        { "id" => id, "labels" => labels.to_h { |k, v| [k.to_s, v.to_s] } }
      end
      report["stats"]["dropped_label_sets"] = dropped
      report
    end

    # The classic result hash (Symbol keys) from a report.json v1 Hash:
    # mode, frequency, counters, start_time_ns, duration_ns,
    # aggregated_samples (or raw_samples) as [[frames as [path, label]],
    # weight, thread_seq, label_set_id], label_sets, dropped_* when
    # non-zero, threads (per-thread contention totals and names) and
    # report (the report itself).
    def build_result(report)
      meta = report["meta"]
      stats = report["stats"]
      frames = report["frames"]
      stacks = report["stacks"]
      result = {
        mode: meta["mode"].to_sym,
        frequency: meta["frequency"],
        trigger_count: stats["trigger_count"],
        sampling_count: stats["sampling_count"],
        sampling_time_ns: stats["sampling_time_ns"],
        detected_thread_count: report["threads"].size,
        unique_frames: [frames.size - 4, 0].max,
        unique_stacks: stacks.size,
        start_time_ns: meta["start_time_ns"],
        duration_ns: meta["duration_ns"]
      }
      expand = lambda do |(stack_id, weight, thread_seq, label_set_id)|
        [stacks[stack_id].map { |fid| frames[fid] }, weight, thread_seq, label_set_id]
      end
      if report.key?("raw_samples")
        result[:raw_samples] = report["raw_samples"].map(&expand)
      else
        result[:aggregated_samples] = report["samples"].map(&expand)
      end
      result[:label_sets] = report["label_sets"].map { |s| s["labels"].transform_keys(&:to_sym) }
      stats.each do |key, value|
        result[key.to_sym] = value if key.start_with?("dropped_") && value.positive?
      end
      result[:threads] = report["threads"].map { |t| t.transform_keys(&:to_sym) }
      result[:report] = report
      result
    end

    def write_output(result)
      require_relative "rperf/contention"
      report = Contention::Report.new(result[:report])
      if @output.respond_to?(:write)
        @output.write(report.to_json)
      else
        report.save(@output)
      end
    end
  end
end

require_relative "rperf/contention"
# Contention log lines (pure Ruby) and the middlewares, which load on first use.
require_relative "rperf/contention_log"
module Rperf
  autoload :Rack, File.expand_path("rperf/rack", __dir__)
  autoload :JobMiddleware, File.expand_path("rperf/job_middleware", __dir__)
end

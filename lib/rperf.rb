# frozen_string_literal: true

# Rperf — the Ruby face of the extension: start/stop/running?, snapshot,
# labels and the profile refcount; stop and snapshot return a Rperf::Report
# over the extension's report.json v1 document, with the Ruby-side label
# sets added. Keyword validation lives here (and in Rperf::SamplerOptions);
# the C methods (`_c_*`) are private and take already-validated values.
# Label keys and values are made valid UTF-8 here, where they enter.
# It does NOT render reports (Rperf::Report does) and does NOT write log
# lines (rperf/contention_log).
#
# Ractors: start/stop/snapshot/label/profile are for the main Ractor (the
# label registry is module state); threads of other Ractors are measured
# all the same.
require_relative "rperf/version"
require_relative "rperf/ext"
require_relative "rperf/sampler_options"
require_relative "rperf/utf8"
require_relative "rperf/report"

module Rperf
  # Capacity options and their defaults: Rperf::LIMITS (defined by the
  # extension from its one header of limits) is the source of every number.
  CONTENTION_DEFAULTS = {
    timeline: false,
    max_threads: LIMITS[:max_threads][:default],
    max_intervals: LIMITS[:max_intervals][:default],
    min_interval_ns: LIMITS[:min_interval_ns][:default],
    max_edges: LIMITS[:max_edges][:default]
  }.freeze

  # Index of each part of COUNTER_FIELDS (the extension's order).
  COUNTER_STATES = %i[running_ns gvl_wait_ns blocked_ns gc_mark_ns gc_sweep_ns].to_h do |name|
    [name, COUNTER_FIELDS.index(name)]
  end.freeze
  COUNTER_RUNNABLE = COUNTER_FIELDS.index(:runnable_ns)
  COUNTER_CAUSES = COUNTER_FIELDS.each_with_index.filter_map do |name, i|
    cause = name[/\Ablocked_(.+)_ns\z/, 1]
    [cause.to_sym, i] if cause
  end.to_h.freeze

  # Label sets beyond this many distinct ones are counted, not registered.
  MAX_LABEL_SETS = LIMITS[:max_label_sets][:default]

  @label_mutex = Mutex.new
  @label_sets = [{}.freeze]
  @label_ids = { {} => 0 }
  @dropped_label_sets = 0
  @output = nil

  class << self
    # Starts profiling. Sampler keywords: frequency:, mode: (:cpu, :wall,
    # or :counters: exact per-thread and per-label totals only, no sampler,
    # timeline or wait graph), aggregate:, signal:, defer:, output: (a path
    # written with Report#save at stop, or an IO given the report.json
    # text), format: (the output's format when its name does not tell, as
    # in Report#save; an output name save cannot write is an ArgumentError
    # here). Contention keywords: timeline:, max_threads:, max_intervals:,
    # min_interval_ns:, max_edges: (nil: the default; with mode: :counters
    # only max_threads: applies, the others are refused). follow_forks:
    # (true) restarts the profile in each forked child (Rperf::Fork).
    # Returns true (with a block: see Rperf::StartWithBlock). Raises
    # StateError when already running or when called from a non-main Ractor.
    def start(timeline: nil, max_threads: CONTENTION_DEFAULTS[:max_threads], max_intervals: nil,
              min_interval_ns: nil, max_edges: nil, format: nil, follow_forks: true, **sampler)
      check_main_ractor!(:start)
      opts = SamplerOptions.normalize(**sampler)
      if opts[:mode_name] == :counters
        SamplerOptions.check_unused_by_counters(timeline: timeline || nil, max_intervals: max_intervals,
                                                min_interval_ns: min_interval_ns, max_edges: max_edges)
        timeline = false
      end
      with_default = ->(name, value) { value.nil? ? CONTENTION_DEFAULTS[name] : value }
      config = {
        frequency: opts[:frequency], mode: opts[:mode], aggregate: opts[:aggregate],
        signal: opts[:signal], defer: opts[:defer],
        timeline: check_boolean(:timeline, with_default.(:timeline, timeline)),
        max_threads: check_count(:max_threads, max_threads),
        max_intervals: check_count(:max_intervals, with_default.(:max_intervals, max_intervals)),
        min_interval_ns: check_count(:min_interval_ns, with_default.(:min_interval_ns, min_interval_ns)),
        max_edges: check_count(:max_edges, with_default.(:max_edges, max_edges))
      }
      # A name save cannot write is refused now, not after the run.
      Report.format_for(opts[:output], format) if opts[:output].is_a?(String) || format
      raise StateError, "rperf: already running (call Rperf.stop first)" if running?

      @label_mutex.synchronize do
        @label_sets = [{}.freeze]
        @label_ids = { {} => 0 }
        @dropped_label_sets = 0
        @fast_label_ids = nil
      end
      @follow_forks = check_boolean(:follow_forks, follow_forks)
      @generation = (@generation || 0) + 1
      @output = opts[:output]
      @output_format = format
      _c_start(config, Thread.list)
      @start_config = config
      true
    end

    # Stops profiling; returns its Rperf::Report, or nil when not running.
    # Writes it to output: when start was given one (a failed write is a
    # warning on stderr; the report is still returned).
    def stop
      check_main_ractor!(:stop)
      document = _c_stop
      return nil unless document

      report = Report.new(finish_report(document))
      write_output(report) if @output
      report
    end

    def running?
      _c_running?
    end

    # The Rperf::Report so far, without stopping; with clear: true the next
    # snapshot covers only the time after this one. nil when not running.
    def snapshot(clear: false)
      check_main_ractor!(:snapshot)
      document = _c_snapshot(clear ? true : false)
      document && Report.new(finish_report(document))
    end

    # Writes a report to path (Report#save: the format from the name, or
    # format:). data: a Report, or a report.json document Hash.
    def save(path, data, format: nil)
      report = case data
               when Report then data
               when Hash then Report.new(data[:report] || data)
               else raise ArgumentError, "data: expected a Rperf::Report, got #{data.class}"
               end
      report.save(path, format: format)
    end

    # Labels of the current thread. With a block: merged into the current
    # labels for the block (nil values delete keys), restored afterwards.
    # Without: set from now on. Returns the block's value or the labels.
    # Keys are Symbols or Strings without a NUL byte (ArgumentError
    # otherwise); keys and values are made valid UTF-8 (invalid bytes become
    # U+FFFD). A value may hold any character, NUL included.
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
    #
    # With runnable: the same totals (and its clock reading as monotonic_ns)
    # as they were when the thread last became runnable after blocking (its
    # data arrived, a lock came free), nil when that was not recorded: the
    # difference to now is what the thread went through since, none of it
    # blocked.
    def thread_contention
      c = _c_thread_counters([])
      return nil unless c

      h = COUNTER_STATES.to_h { |name, i| [name, c[i]] }
      h[:monotonic_ns] = c[0]
      h[:blocked_by_cause] = COUNTER_CAUSES.each_with_object({}) { |(cause, i), out| out[cause] = c[i] if c[i].positive? }
      h[:runnable] = if c[COUNTER_RUNNABLE].positive?
                       COUNTER_STATES.to_h { |name, i| [name, c[i + COUNTER_RUNNABLE]] }
                                     .merge(monotonic_ns: c[COUNTER_RUNNABLE])
                     end
      h
    end

    # The calling thread's counters as one Array in COUNTER_FIELDS order
    # (written into `into` when given: no Hash, nothing else allocated), or
    # nil when not profiling. The cheap form of thread_contention.
    def thread_counters(into = [])
      _c_thread_counters(into)
    end

    private

    def follow_forks? = @follow_forks && @start_config

    # What a forked child needs to restart the profile as it was here.
    def fork_state
      { config: @start_config, refcount: _c_refcount, label: _c_get_label }
    end

    # In the child: the inherited profile is left behind (the extension does
    # that at the next call) and started anew, its refcount and the forking
    # thread's label as they were at the fork.
    def restart_after_fork(state)
      config = state[:config]
      _c_start(config, Thread.list)
      ((config[:defer] ? 0 : 1)...state[:refcount]).each { _c_profile_inc }
      _c_set_label(state[:label]) unless state[:label].zero?
      @output = Fork.child_output(@output)
    rescue Error => e
      warn "rperf: the profile could not restart in the forked child #{Process.pid}: #{e.message}"
    end

    # label(**set) { } whose two switches also read the thread's counters
    # (thread_counters Arrays; nil when not profiling) at their own clock reading:
    # the block gets the first, log.end_unit_counters(unit, second) is called,
    # also when the block raises (no closure to allocate per unit). Between the two is exactly the time the label totals
    # charge to `set` on this thread, whatever the scheduler does around the
    # calls. For Rperf::ContentionLog, whose lines must sum to its interval
    # lines.
    def label_with_counters(set, log, unit)
      previous_id = _c_get_label
      id = previous_id.zero? && set.frozen? ? fast_label_id(set) : label_set_id(labels.merge(normalize_labels(set)).compact)
      begin
        yield _c_switch_label(id, [])
      ensure
        log.__send__(:end_unit_counters, unit, _c_switch_label(previous_id, []))
      end
    end

    # The label set id of a frozen labels Hash on a thread without labels
    # (a log unit's: the label cap keeps one frozen Hash per set), found by
    # the Hash's identity after its first normalisation. Bounded; emptied
    # when a profile starts (ids start again). log_unit.c reads
    # @fast_label_ids itself on a hit: keep it an identity Hash of set => id.
    FAST_LABEL_IDS_MAX = 10_000

    def fast_label_id(set)
      cache = @fast_label_ids ||= {}.compare_by_identity
      id = cache[set]
      return id if id

      id = label_set_id(normalize_labels(set).compact)
      cache[set] = id if cache.size < FAST_LABEL_IDS_MAX
      id
    end

    # Label sets the registry could not take (Rperf::Metrics reports them).
    def dropped_label_sets
      @label_mutex.synchronize { @dropped_label_sets }
    end

    # How many profiles this process started (Rperf::Metrics tells a new
    # profile's counters, which start again from zero, by it).
    def generation = @generation || 0

    # The frozen labels Hash of a label set id, or nil.
    def label_set(id)
      @label_mutex.synchronize { @label_sets[id] }
    end


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
        unless k.is_a?(Symbol) || k.is_a?(String)
          raise ArgumentError, "label key #{k.inspect} is invalid; expected a Symbol or a String"
        end

        key = k.is_a?(Symbol) && k.name.valid_encoding? ? k : UTF8.scrub(k.to_s).to_sym
        # A report holds a label set as a JSON object: a key is an object
        # key there, which no reader takes with a NUL. Values may hold one.
        raise ArgumentError, "label key #{key.inspect} is invalid; it contains a NUL byte" if key.name.include?("\0")

        h[key] = v.nil? ? nil : UTF8.scrub(v).dup.freeze
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

    # A failed write must not lose the profile: it is reported on stderr
    # and stop still returns the report (to be saved elsewhere).
    def write_output(report)
      if @output.respond_to?(:write)
        @output.write(report.to_json)
      else
        report.save(@output, format: @output_format)
      end
    rescue SystemCallError, IOError, RenderError => e
      warn "rperf: cannot write the profile to #{@output.inspect}: #{e.message} " \
           "(Rperf.stop still returns it)"
    end
  end
end

require_relative "rperf/contention"
require_relative "rperf/fork"
# Contention log lines (pure Ruby) and the middlewares, which load on first use.
require_relative "rperf/contention_log"
module Rperf
  autoload :Rack, File.expand_path("rperf/rack", __dir__)
  autoload :JobMiddleware, File.expand_path("rperf/job_middleware", __dir__)
end

# frozen_string_literal: true

# Rperf::Metrics — contention counters for Prometheus, from every process
# of a fleet (docs/metrics.md). A Store counts each unit of work a
# Rperf::ContentionLog finishes (one call per unit: ContentionLog#emit) into
# per label set counters and histograms, and writes them with the whole
# process's own counters to one file of a directory: rperf-PID-START.json,
# replaced by rename from a background thread every `interval` seconds and
# at exit, never per unit. Whoever answers a scrape (Rperf::Rack::Metrics,
# `rperf-gvl metrics DIR`) reads every file of the directory through the
# analysis library, which adds them up and writes the exposition.
#
# A unit counts whole: the before_*, main and after_* windows of its line
# (from its thread becoming runnable to the response written). Label sets
# come capped from the log; the store caps them again (max_label_sets) and
# counts what it folds. Recording never raises into the program; a file
# that cannot be written is counted (stats) and reported once on $stderr.
# It does NOT render the exposition (the extension's analysis library
# does) and does NOT serve HTTP (Rperf::Rack::Metrics does). The Store is
# in metrics/store.rb, loaded with the first store (it reads the
# extension's Rperf::METRICS_FORMAT).

module Rperf
  module Metrics
    ENV_DIR = "RPERF_METRICS_DIR"
    DEFAULT_INTERVAL = 1.0
    # Flags of Rperf._c_metrics_render (analysis/metrics.h).
    OPENMETRICS = 1
    FOLD = 2
    SKIP_BAD = 4

    @stores = {}
    @stores_mutex = Mutex.new

    class << self
      # The store of a directory: one per directory in a process (the Rack
      # and the job middleware of one process share it).
      def store(dir, **options)
        require_relative "metrics/store"
        path = File.expand_path(dir)
        @stores_mutex.synchronize { @stores[path] ||= Store.new(path, **options) }
      end

      # The metrics directory a middleware uses: the option, else
      # $RPERF_METRICS_DIR, else nil (no metrics).
      def dir_from(option)
        dir = option.nil? ? ENV.fetch(ENV_DIR, nil) : option
        dir.nil? || dir.to_s.empty? ? nil : dir.to_s
      end

      # A store from ContentionLog's metrics: option (a Store, a directory or nil).
      def resolve(metrics)
        case metrics
        when nil, false then nil
        when String then store(metrics)
        else
          return metrics if metrics.respond_to?(:record)

          raise ArgumentError, "metrics: expected a Rperf::Metrics::Store or a directory, got #{metrics.class}"
        end
      end

      # Writes this process's file of dir now, when this process has a store
      # for it (so a scrape it answers shows its own latest numbers).
      def flush(dir)
        store = @stores_mutex.synchronize { @stores[File.expand_path(dir)] }
        store&.flush
      end

      # Writes this process's file of dir a last time, stops its writer
      # thread and forgets the store (a log holding it still counts, but
      # writes no more).
      def close(dir)
        store = @stores_mutex.synchronize { @stores.delete(File.expand_path(dir)) }
        store&.close
      end

      # The Prometheus text of every process writing dir (OpenMetrics with
      # openmetrics: true). fold: first add dead processes' files into the
      # aggregate. Raises Rperf::ReportError for a bad directory; with
      # skip_bad: an unreadable file is counted instead.
      def text(dir, openmetrics: false, fold: true, skip_bad: false)
        flags = (openmetrics ? OPENMETRICS : 0) | (fold ? FOLD : 0) | (skip_bad ? SKIP_BAD : 0)
        Rperf.__send__(:_c_metrics_render, dir.to_s, flags)
      end
    end
  end
end

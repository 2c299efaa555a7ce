# frozen_string_literal: true

# Rperf::JobMiddleware: a Sidekiq-style server middleware (it needs no
# sidekiq gem: any runner that calls `call(worker, job, queue) { perform }`
# fits) that writes one contention line per job, labelled by job class and
# queue. ActiveJob (or any job object with a class, #queue_name and
# #job_id) uses Rperf::JobMiddleware.around_perform from an around_perform
# callback. Job and queue names are made valid UTF-8 (U+FFFD for bad bytes). The job id goes into the line as a field, never into a label,
# so it cannot grow the label tables. It does NOT start the profiler
# (call Rperf.start(mode: :counters, defer: true) at boot).
#
#   Sidekiq.configure_server do |config|
#     config.server_middleware { |chain| chain.add Rperf::JobMiddleware, output: Logger.new($stdout) }
#   end
#
#   class ApplicationJob < ActiveJob::Base
#     around_perform { |job, block| Rperf::JobMiddleware.around_perform(job, &block) }
#   end
require_relative "contention_log"
require_relative "metrics"

module Rperf
  class JobMiddleware
    attr_reader :log

    # log:      a Rperf::ContentionLog, or the options to build one
    #           (output:, format:, units:, ...; default output $stderr)
    # labeller: ->(worker, job, queue) { Hash } to replace the default
    #           { job: "ClassName", queue: "default" }
    # metrics_dir: count every job in this metrics directory (default
    #           $RPERF_METRICS_DIR; docs/metrics.md); with log:, give the log metrics: instead
    # Sidekiq passes the arguments of `chain.add` positionally, so a Hash
    # given as the only positional argument is taken as the options.
    def initialize(options = nil, **kw)
      opts = (options || {}).transform_keys(&:to_sym).merge(kw)
      log = opts.delete(:log)
      @labeller = opts.delete(:labeller)
      raise ArgumentError, "labeller must respond to #call" if @labeller && !@labeller.respond_to?(:call)
      raise ArgumentError, "give either log: or options to build one, not both" if log && !opts.empty?

      opts[:metrics] = Metrics.dir_from(opts.delete(:metrics_dir)) unless log || opts.key?(:metrics)
      @log = log || ContentionLog.new(**{ output: $stderr }.merge(opts))
    end

    def call(worker, job, queue, &block)
      labels, fields = describe(worker, job, queue)
      @log.measure(labels, kind: "job", fields: fields, before: true, &block)
    end

    # The log used by .around_perform; ContentionLog.default unless set.
    class << self
      attr_writer :log

      def log
        @log || ContentionLog.default
      end

      # For ActiveJob's around_perform: measures one job object.
      def around_perform(job, &block)
        labels = { job: UTF8.scrub(job.class.name) }
        labels[:queue] = UTF8.scrub(job.queue_name) if job.respond_to?(:queue_name) && job.queue_name
        fields = {}
        fields[:job_id] = job.job_id.to_s if job.respond_to?(:job_id) && job.job_id
        log.measure(labels, kind: "job", fields: fields, before: true, &block)
      end
    end

    private

    def describe(worker, job, queue)
      fields = {}
      jid = job.is_a?(Hash) ? (job["jid"] || job[:jid]) : nil
      fields[:job_id] = jid.to_s if jid
      labels =
        begin
          @labeller ? @labeller.call(worker, job, queue) : default_labels(worker, job, queue)
        rescue StandardError => e
          @log.sink.failed(e, what: "the job labeller")
          { job: "unlabelled" }
        end
      [labels.is_a?(Hash) ? labels : { job: labels.to_s }, fields]
    end

    # ActiveJob jobs run through Sidekiq carry their real class in "wrapped".
    def default_labels(worker, job, queue)
      name = nil
      if job.is_a?(Hash)
        name = job["wrapped"] || job[:wrapped] || job["class"] || job[:class]
      end
      name ||= worker.is_a?(Class) ? worker.name : worker.class.name
      labels = { job: UTF8.scrub(name) }
      labels[:queue] = UTF8.scrub(queue) if queue
      labels
    end
  end
end

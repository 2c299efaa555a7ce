# frozen_string_literal: true

# Rperf::Rack::Middleware: a Rack-compatible middleware (it needs no rack
# gem) that measures each request with Rperf::ContentionLog: it labels the
# request `endpoint` = "METHOD /normalised/path" (/users/123 -> /users/:id,
# UUIDs -> :uuid; bytes of the path that are not valid UTF-8 become U+FFFD),
# sets that label on the profiler while the app runs,
# writes one log line when the app returns, and exposes the numbers to the
# app as env["rperf.contention"] (a Rperf::ContentionLog::Unit: #so_far
# while the request runs, #result and #to_h after).
#
# The line's main numbers are the app's #call; before_* fields cover the
# request's thread from its data arriving to the app's call, after_* the
# response's write up to the server's after-reply hook (docs/logging.md).
# It does NOT start the profiler (call Rperf.start(mode: :counters) at boot).
#
#   use Rperf::Rack::Middleware, output: Logger.new($stdout)
#   use Rperf::Rack::Middleware, log: my_contention_log,
#       labeller: ->(env) { { endpoint: env["app.route"] || "unknown" } }
#
# Rperf::Rack::Metrics (below) serves the metrics those requests feed
# (metrics_dir:, docs/metrics.md) as Prometheus text.
require "fileutils"
require_relative "contention_log"
require_relative "metrics"

module Rperf
  module Rack
    ENV_KEY = "rperf.contention"

    # Requests whose method and path were seen recently get the same frozen
    # labels Hash again: normalising a path costs more than the rest of the
    # label's way, and later caches find one Hash by identity. Emptied when full.
    # Keyed method -> script -> path (no key Array per request; a Hash
    # keeps a frozen copy of a String key). Simple paths with integer ids
    # are keyed by their id shape instead, in a table of their own (a shape
    # may equal another raw path): /users/12 and /users/13 are one entry.
    ENDPOINT_CACHE_MAX = 4096
    @endpoint_cache = {}
    @shape_cache = {}
    @endpoint_count = 0
    # One frozen labels Hash per content (#interned_labels): the label cap
    # and the C request path find a label set by identity, so a new Hash per
    # request (a new id in the path, a labeller's result) would send every
    # such request down the Ruby path. Never emptied (that would make new
    # identities); full, it interns no more.
    @interned_labels = {}

    # The default labeller: { endpoint: "GET /users/:id" }, frozen.
    def self.endpoint_label(env)
      method = env["REQUEST_METHOD"]
      script = env["SCRIPT_NAME"]
      path = env["PATH_INFO"]
      hit = @endpoint_cache[method]&.[](script)&.[](path)
      return hit if hit

      shape = Log::PathNormalizer.id_shape(path)
      if shape && (hit = @shape_cache[method]&.[](script)&.[](shape))
        return hit
      end

      if @endpoint_count >= ENDPOINT_CACHE_MAX
        @endpoint_cache.clear
        @shape_cache.clear
        @endpoint_count = 0
      end
      label = endpoint_label_of(method, script, path)
      table = shape ? @shape_cache : @endpoint_cache
      ((table[method] ||= {})[script] ||= {})[shape || path] = label
      @endpoint_count += 1
      label
    end

    def self.endpoint_label_of(method, script, path)
      method = method.to_s
      method = "OTHER" unless method.match?(/\A[A-Z]{1,16}\z/)
      path = UTF8.scrub(path)
      path = "/" if path.empty?
      interned_labels({ endpoint: "#{method} #{Log::PathNormalizer.normalize(UTF8.scrub(script) + path)}" })
    end
    private_class_method :endpoint_label_of

    # labels as the one frozen Hash of its content, when its keys and values
    # are plain (their hashing runs no Ruby code, and a frozen copy cannot
    # change); else, or when the table is full, labels as given.
    def self.interned_labels(labels)
      return labels unless labels.all? { |k, v| plain_label_key?(k) && plain_label_value?(v) }

      hit = @interned_labels[labels]
      return hit if hit

      copy = labels.to_h { |k, v| [k, v.is_a?(String) ? -v : v] }.freeze
      @interned_labels[copy] = copy if @interned_labels.size < ENDPOINT_CACHE_MAX
      copy
    end

    def self.plain_label_key?(key) = key.is_a?(Symbol) || key.instance_of?(String)

    def self.plain_label_value?(value)
      value.nil? || value.is_a?(Symbol) || value.is_a?(Integer) || value.instance_of?(String)
    end
    private_class_method :plain_label_key?, :plain_label_value?

    class Middleware
      attr_reader :log

      # app:      the Rack app
      # log:      a Rperf::ContentionLog (or build one from the other options:
      #           output:, format:, units:, level:, max_label_sets:, profile: ...)
      # labeller: ->(env) { Hash } (default Rperf::Rack.endpoint_label)
      # env_key:  where the unit is exposed ("rperf.contention"; nil: not exposed)
      # status:   add status=NNN to the line (true)
      # metrics_dir: count every request in this metrics directory (default
      #           $RPERF_METRICS_DIR; docs/metrics.md); with log:, give the log metrics: instead
      def initialize(app, log: nil, labeller: nil, env_key: ENV_KEY, status: true, metrics_dir: nil, **log_options,
                     &block)
        raise ArgumentError, "labeller must respond to #call" if labeller && !labeller.respond_to?(:call)
        if log && (!log_options.empty? || block || metrics_dir)
          raise ArgumentError, "give either log: or options to build one, not both"
        end

        @app = app
        log_options[:metrics] = Rperf::Metrics.dir_from(metrics_dir) unless log || log_options.key?(:metrics)
        @log = log || ContentionLog.new(**{ output: block ? nil : $stderr }.merge(log_options), &block)
        @labeller = labeller
        @c_request = @log.respond_to?(:request_config) ? @log.request_config : nil
        @env_key = env_key
        @status = status
      end

      # The line covers the request from its thread becoming runnable (the
      # bytes arrived) to the response written, where the server says when
      # that is: Puma's rack.after_reply, Rack 3's rack.response_finished.
      # The unit is counted in C where the log can (one call to begin it,
      # one to end it); else the log's Ruby path measures it the same way.
      def call(env)
        after = env["rack.after_reply"]
        # Puma runs rack.after_reply on the request's thread before its next
        # request: the log's one hook serves every unit there.
        shared = after.is_a?(Array)
        unless shared
          after = env["rack.response_finished"]
          after = nil unless after.is_a?(Array)
        end
        labels = @labeller ? labels_for(env) : Rack.endpoint_label(env)
        # Straight into C where the log allows it (one Ruby frame less each way).
        unit = begin
          Rperf.__send__(:_c_request_begin, @c_request, labels, after) if @c_request
        rescue StandardError
          nil # the log's Ruby path sets the labels again and says why they fail
        end
        unit ||= @log.begin_request_unit(labels, after)
        return measured_call(env, unit) unless unit&.reads

        begin
          env[@env_key] = unit if @env_key
          response = @app.call(env)
          if @status && response.is_a?(Array)
            status = response[0]
            unit.status = status.is_a?(Integer) ? status : status.to_i
          end
          response
        rescue Exception => e # rubocop:disable Lint/RescueException -- recorded, then re-raised
          unit.error ||= e.class.name
          raise
        ensure
          begin
            @log.end_request_unit(unit, shared) unless @c_request && Rperf.__send__(:_c_request_end, unit)
          rescue StandardError => e
            @log.sink.failed(e)
          end
        end
      end

      private

      def measured_call(env, unit)
        @log.measure_unit(unit) do |u|
          env[@env_key] = u if @env_key && u
          response = @app.call(env)
          u.status = response[0].to_i if u && @status && response.is_a?(Array)
          response
        end
      end

      # A labeller that raises or returns junk must not fail the request.
      # Its new Hash each request becomes its content's one frozen copy.
      def labels_for(env)
        labels = @labeller.call(env)
        Rack.interned_labels(labels.is_a?(Hash) ? labels : { endpoint: labels.to_s })
      rescue StandardError => e
        @log.sink.failed(e, what: "the request labeller")
        { endpoint: "unlabelled" }
      end
    end

    # Rperf::Rack::Metrics serves the Prometheus text of a metrics directory
    # (every process writing it, docs/metrics.md) at one path of the app, or
    # at every path when it is the app itself. OpenMetrics when the scraper
    # asks for it (Accept) or ?format=openmetrics; ?format=text forces 0.0.4.
    # The files of dead processes are folded as it reads; an unreadable file
    # is skipped and counted. It never raises: a failure answers 503.
    #
    #   use Rperf::Rack::Metrics, dir: "/run/app/metrics"   # GET /metrics
    #   run Rperf::Rack::Metrics.new(dir: "/run/app/metrics")
    class Metrics
      TEXT = "text/plain; version=0.0.4; charset=utf-8"
      OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"

      attr_reader :dir, :path

      # dir: the metrics directory (default $RPERF_METRICS_DIR); path: where
      # it answers when it wraps an app ("/metrics").
      def initialize(app = nil, dir: nil, path: "/metrics")
        @app = app
        @dir = Rperf::Metrics.dir_from(dir)
        raise ArgumentError, "Rperf::Rack::Metrics needs dir: or $#{Rperf::Metrics::ENV_DIR}" unless @dir

        @path = path
      end

      def call(env)
        return @app.call(env) if @app && env["PATH_INFO"] != @path

        method = env["REQUEST_METHOD"]
        return [405, { "content-type" => "text/plain", "allow" => "GET, HEAD" }, ["GET or HEAD\n"]] unless
          %w[GET HEAD].include?(method)

        om = openmetrics?(env)
        # Before the first unit of any process the directory may not exist
        # yet: then it is made, and the text has every family and no series.
        make_dir unless File.directory?(@dir)
        Rperf::Metrics.flush(@dir)
        text = Rperf::Metrics.text(@dir, openmetrics: om, skip_bad: true)
        [200, { "content-type" => om ? OPENMETRICS : TEXT }, [method == "HEAD" ? "" : text]]
      rescue StandardError => e
        [503, { "content-type" => "text/plain; charset=utf-8" }, ["rperf: metrics unavailable: #{e.message}\n"]]
      end

      private

      # The renderer says why a directory that cannot be made is unusable.
      def make_dir
        FileUtils.mkdir_p(@dir)
      rescue SystemCallError
        nil
      end

      def openmetrics?(env)
        format = env["QUERY_STRING"].to_s[/(?:\A|&)format=([a-z]+)/, 1]
        return format == "openmetrics" if format

        env["HTTP_ACCEPT"].to_s.include?("application/openmetrics-text")
      end
    end
  end
end

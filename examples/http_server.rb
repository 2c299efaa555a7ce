# frozen_string_literal: true

# A threaded HTTP server on Ruby's stdlib sockets (TCPServer and a pool of
# worker threads) running a Rack-style app behind Rperf::Rack::Middleware:
# every request writes one contention line. One endpoint hogs the GVL in a
# pure-Ruby loop, so the requests next to it show GVL wait.
#
#   ruby -Ilib -Ibuild/ext examples/http_server.rb              # demo: serve, send a burst, print lines, exit
#   ruby -Ilib -Ibuild/ext examples/http_server.rb --serve      # keep serving (Ctrl-C stops)
#     --port N (0: any free port)  --workers N  --format logfmt|json  --log FILE  --interval SECONDS
#     --report FILE  profile the whole run (not deferred) and save report.json for rperf-gvl
#
# Endpoints: GET /users/:id (a 5 ms query, then ~1 ms of Ruby), GET /hog
# (~0.7 s of Ruby without blocking), GET /io (waits 50 ms), GET /health.
# A request only waits for the GVL when it wants it back, e.g. after its
# query returns while /hog holds it: that wait is what the lines show.
# docs/logging.md walks through its output.
require "socket"
require "optparse"
require "rperf"
require "rperf/rack"

module HTTPExample
  def self.fib(n) = n < 2 ? n : fib(n - 1) + fib(n - 2)

  # The application: a plain Rack-style lambda.
  APP = lambda do |env|
    case env["PATH_INFO"]
    when %r{\A/users/(\d+)\z}
      id = Regexp.last_match(1)
      # A field, not a label: ids would make one label set per user.
      env["rperf.contention"]&.add_fields(user_id: id)
      sleep 0.005 # the database query: releases the GVL, then must win it back
      fib(20)     # about a millisecond of Ruby work: render the user
      [200, { "content-type" => "application/json" }, [%({"id":#{id}}\n)]]
    when "/hog"
      [200, { "content-type" => "text/plain" }, ["#{fib(34)}\n"]] # ~0.7 s pure-Ruby loop: holds the GVL
    when "/io"
      sleep 0.05 # a database round trip: releases the GVL
      [200, { "content-type" => "text/plain" }, ["ok\n"]]
    when "/health"
      [200, { "content-type" => "text/plain" }, ["ok\n"]]
    else
      [404, { "content-type" => "text/plain" }, ["not found\n"]]
    end
  end

  # HTTP/1.0-style server: one request per connection (Connection: close),
  # accepted on one thread and handled by a fixed pool of workers.
  class Server
    MAX_HEADER_BYTES = 16 * 1024
    STATUS = { 200 => "OK", 400 => "Bad Request", 404 => "Not Found", 500 => "Internal Server Error" }.freeze

    attr_reader :port

    def initialize(app, host: "127.0.0.1", port: 0, workers: 8)
      @app = app
      @host = host
      @server = TCPServer.new(host, port)
      @port = @server.addr[1]
      @queue = Queue.new
      @workers = workers.times.map do |i|
        Thread.new do
          Thread.current.name = "http-worker-#{i}"
          while (sock = @queue.pop)
            serve(sock)
          end
        end
      end
      @acceptor = Thread.new do
        Thread.current.name = "http-acceptor"
        accept_loop
      end
    end

    def stop
      @server.close unless @server.closed?
      @acceptor.join
      @workers.size.times { @queue << nil }
      @workers.each(&:join)
    end

    private

    def accept_loop
      loop { @queue << @server.accept }
    rescue IOError, Errno::EBADF, Errno::EINVAL
      nil # closed by #stop
    end

    # A worker outlives whatever one connection raises: a pool that lost its
    # workers would accept connections and never answer them.
    def serve(sock)
      handle(sock)
    rescue Exception => e # rubocop:disable Lint/RescueException
      warn "http_server: #{e.class} while answering: #{e.message}"
    end

    def handle(sock)
      sock.timeout = 10
      env = read_request(sock)
      status, headers, body = env ? call_app(env) : [400, {}, ["bad request\n"]]
      write_response(sock, status, headers, body)
    rescue IOError, SystemCallError
      nil # the client went away
    ensure
      sock.close unless sock.closed?
    end

    # Anything the app raises is a 500, not only StandardError: a handler's
    # NotImplementedError or NoMemoryError must not take its worker down.
    def call_app(env)
      @app.call(env)
    rescue Exception => e # rubocop:disable Lint/RescueException
      warn "http_server: #{e.class}: #{e.message}"
      [500, { "content-type" => "text/plain" }, ["error\n"]]
    end

    def read_request(sock)
      line = sock.gets("\r\n", MAX_HEADER_BYTES) or return nil
      method, target, version = line.split(" ", 3)
      return nil unless method && target && version&.start_with?("HTTP/")

      path, query = target.split("?", 2)
      env = { "REQUEST_METHOD" => method, "PATH_INFO" => path, "QUERY_STRING" => query.to_s,
              "SCRIPT_NAME" => "", "SERVER_NAME" => @host, "SERVER_PORT" => @port.to_s,
              "SERVER_PROTOCOL" => version.strip, "rack.url_scheme" => "http" }
      bytes = line.bytesize
      while (h = sock.gets("\r\n", MAX_HEADER_BYTES))
        bytes += h.bytesize
        return nil if bytes > MAX_HEADER_BYTES

        h = h.chomp
        break if h.empty?

        name, value = h.split(":", 2)
        next unless value

        key = name.strip.upcase.tr("-", "_")
        key = "HTTP_#{key}" unless %w[CONTENT_TYPE CONTENT_LENGTH].include?(key)
        env[key] = value.strip
      end
      env
    end

    def write_response(sock, status, headers, body)
      payload = +""
      body.each { |chunk| payload << chunk }
      body.close if body.respond_to?(:close)
      head = +"HTTP/1.1 #{status} #{STATUS.fetch(status, 'Unknown')}\r\n"
      headers.each { |k, v| head << "#{k}: #{v}\r\n" }
      head << "content-length: #{payload.bytesize}\r\nconnection: close\r\n\r\n"
      sock.write(head, payload)
    end
  end

  # Sends one GET over a raw socket; returns [status, body].
  def self.get(port, path)
    TCPSocket.open("127.0.0.1", port) do |s|
      s.timeout = 30
      s.write("GET #{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
      resp = s.read
      [resp[/\AHTTP\/1\.1 (\d+)/, 1].to_i, resp.split("\r\n\r\n", 2)[1]]
    end
  end

  def self.main(argv)
    opts = { port: 0, workers: 8, format: "logfmt", log: nil, interval: nil, serve: false, report: nil }
    OptionParser.new do |o|
      o.banner = "usage: ruby -Ilib -Ibuild/ext examples/http_server.rb [--serve] [options]"
      o.on("--serve", "keep serving until interrupted") { opts[:serve] = true }
      o.on("--port N", Integer, "port to listen on (0: any free port)") { |v| opts[:port] = v }
      o.on("--workers N", Integer, "worker threads") { |v| opts[:workers] = v }
      o.on("--format F", %w[logfmt json], "log format") { |v| opts[:format] = v }
      o.on("--log FILE", "write contention lines to FILE (default: stdout)") { |v| opts[:log] = v }
      o.on("--interval S", Float, "also write per-label lines every S seconds") { |v| opts[:interval] = v }
      o.on("--report FILE", "profile the whole run and save report.json") { |v| opts[:report] = v }
    end.parse!(argv)

    out = opts[:log] ? File.open(opts[:log], "a") : $stdout
    out.sync = true
    log = Rperf::ContentionLog.new(output: out, format: opts[:format])
    # defer: true: the profiler records only while a request runs (the
    # middleware wraps each in Rperf.profile). --report records everything.
    Rperf.start(mode: :wall, frequency: opts[:report] ? 1000 : 100, defer: !opts[:report])
    log.start_interval(every: opts[:interval]) if opts[:interval]
    server = Server.new(Rperf::Rack::Middleware.new(APP, log: log), port: opts[:port], workers: opts[:workers])
    $stdout.puts "listening on http://127.0.0.1:#{server.port}"
    $stdout.flush

    if opts[:serve]
      stop = Queue.new
      %w[INT TERM].each { |sig| trap(sig) { stop << sig } }
      stop.pop
    else
      # The demo burst: a few requests alone, then one GVL hog with user
      # lookups and IO calls arriving while it runs.
      # The clients are threads of this process too: named client-*.
      client = ->(name, path) { Thread.new { Thread.current.name = "client-#{name}"; get(server.port, path) } }
      %w[/users/1 /io /health].each { |path| get(server.port, path) }
      hog = client.call("hog", "/hog")
      sleep 0.15
      others = (2..7).map do |i|
        sleep 0.03
        client.call("user#{i}", "/users/#{i}")
      end
      others << client.call("io", "/io")
      (others + [hog]).each(&:join)
    end
  ensure
    log&.stop_interval
    server&.stop
    log&.flush
    if Rperf.running?
      result = Rperf.stop
      if opts[:report]
        result.save(opts[:report])
        warn "wrote #{opts[:report]}"
      end
    end
    out.close if opts && opts[:log] && out && !out.closed?
  end
end

HTTPExample.main(ARGV.dup) if $PROGRAM_NAME == __FILE__

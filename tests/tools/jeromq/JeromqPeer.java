// A ZMTP/2.0 peer for the ZMTP tests: JeroMQ 0.3.6 (Debian's libjeromq-java) speaks only ZMTP/2.0,
// so a libzmq 4 peer connected to it downgrades (RFC 23, backwards interoperability). Exact counts,
// like tests/tools/zmq_messages:
//   pull --bind EP --count N            receive N messages (exit 1 on timeout); EP may end in ":*":
//                                       then the bound port is printed first, as "port P"
//   push --connect EP --count N         send N messages as fast as JeroMQ takes them
//   options: --size B (bytes per frame, default 8), --parts P (frames per message, default 1),
//            --varied (the recorder's sizes: see frameSize), --timeout-ms T (default 20000)
// Compiled at test time:  javac -cp /usr/share/java/jeromq.jar -d DIR JeromqPeer.java
// and run as:             java -cp /usr/share/java/jeromq.jar:DIR JeromqPeer MODE ...
import org.zeromq.ZMQ;

public final class JeromqPeer {
  private String mode;
  private String endpoint;
  private boolean bind;
  private long count = 1000;
  private int size = 8;
  private int parts = 1;
  private boolean varied = false;
  private int timeoutMs = 20000;

  // --varied: the same sizes as protocol_recorder's libzmq sender, so that recordings in either
  // direction have short, long (> 255 bytes) and multipart frames and one frame larger than a read.
  static int frameSize(long i) {
    if (i == 700) return 9000;
    if (i % 250 == 7) return 300;
    return (int) ((i * 37) % 121);
  }

  static int frameCount(long i) { return i % 10 == 3 ? 3 : 1; }

  private static void usage(String why) {
    System.err.println("JeromqPeer: " + why);
    System.err.println("usage: JeromqPeer pull --bind EP | push --connect EP [--count N] [--size B] [--parts P]"
        + " [--varied] [--timeout-ms T]");
    System.exit(2);
  }

  private static long number(String flag, String value, long min, long max) {
    try {
      long v = Long.parseLong(value);
      if (v < min || v > max) usage(flag + " must be in [" + min + ", " + max + "], not " + value);
      return v;
    } catch (NumberFormatException e) {
      usage(flag + " needs a number, not '" + value + "'");
    }
    return 0;
  }

  private void parse(String[] args) {
    if (args.length < 1) usage("no mode");
    mode = args[0];
    if (!mode.equals("pull") && !mode.equals("push")) usage("unknown mode '" + mode + "'");
    for (int i = 1; i < args.length; ++i) {
      String a = args[i];
      if (a.equals("--varied")) {
        varied = true;
        continue;
      }
      if (i + 1 >= args.length) usage(a + " needs a value");
      String v = args[++i];
      switch (a) {
        case "--bind": endpoint = v; bind = true; break;
        case "--connect": endpoint = v; bind = false; break;
        case "--count": count = number(a, v, 0, Long.MAX_VALUE); break;
        case "--size": size = (int) number(a, v, 0, 1 << 24); break;
        case "--parts": parts = (int) number(a, v, 1, 1000); break;
        case "--timeout-ms": timeoutMs = (int) number(a, v, 1, Integer.MAX_VALUE); break;
        default: usage("unknown option '" + a + "'");
      }
    }
    if (endpoint == null) usage("--bind or --connect is required");
  }

  private int run() {
    ZMQ.Context ctx = ZMQ.context(1);
    ZMQ.Socket sock = ctx.socket(mode.equals("pull") ? ZMQ.PULL : ZMQ.PUSH);
    sock.setLinger(timeoutMs);  // the last messages still leave before the context ends
    sock.setReceiveTimeOut(timeoutMs);
    if (bind && endpoint.endsWith(":*")) {
      int port = sock.bindToRandomPort(endpoint.substring(0, endpoint.length() - 2));
      System.out.println("port " + port);
      System.out.flush();
    } else if (bind) {
      sock.bind(endpoint);
    } else {
      sock.connect(endpoint);
    }
    long done = 0;
    long frames = 0;
    for (; done < count; ++done) {
      if (mode.equals("push")) {
        int n = varied ? frameCount(done) : parts;
        for (int p = 0; p < n; ++p) {
          byte[] frame = new byte[varied ? frameSize(done) : size];
          java.util.Arrays.fill(frame, (byte) 'j');
          if (!sock.send(frame, p + 1 < n ? ZMQ.SNDMORE : 0)) {
            System.err.println("JeromqPeer: send failed after " + done + " messages");
            return 1;
          }
          ++frames;
        }
      } else {
        byte[] frame = sock.recv(0);
        if (frame == null) break;  // timeout
        ++frames;
        while (sock.hasReceiveMore()) {
          if (sock.recv(0) == null) break;
          ++frames;
        }
      }
    }
    System.out.println(mode + ": " + done + " messages, " + frames + " frames");
    sock.close();
    ctx.term();
    return done == count ? 0 : 1;
  }

  public static void main(String[] args) {
    JeromqPeer peer = new JeromqPeer();
    peer.parse(args);
    System.exit(peer.run());
  }
}

// Reads a gzip file with java.util.zip.GZIPInputStream, as DHIS2 and other Java programs read
// one, and writes the decompressed bytes to standard output.
//
// usage: java ReadGzip.java FILE
import java.io.BufferedInputStream;
import java.io.FileInputStream;
import java.util.zip.GZIPInputStream;

public class ReadGzip {
  public static void main(String[] args) throws Exception {
    try (GZIPInputStream gzip =
        new GZIPInputStream(new BufferedInputStream(new FileInputStream(args[0])), 1 << 16)) {
      byte[] buffer = new byte[1 << 16];
      for (int n; (n = gzip.read(buffer)) > 0; ) System.out.write(buffer, 0, n);
    }
    System.out.flush();
  }
}

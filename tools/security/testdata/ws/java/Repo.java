import java.io.ObjectInputStream;
import java.security.MessageDigest;
import javax.crypto.Cipher;

class Repo {
    Object find(java.sql.Statement st, String id, java.io.InputStream in, String cmd) throws Exception {
        st.executeQuery("SELECT * FROM accounts WHERE id = " + id);
        Runtime.getRuntime().exec(cmd);
        MessageDigest md = MessageDigest.getInstance("MD5");
        Cipher c = Cipher.getInstance("DES/CBC/PKCS5Padding");
        ObjectInputStream ois = new ObjectInputStream(in);
        return ois.readObject();
    }
}
